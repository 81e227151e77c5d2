// The account `fleetkit gateway install` runs the gateway as and gives the state to: the one owner besides
// root and the running user whose state directory fleetkit trusts (src/fs/trusted-directory.ts).
export const GATEWAY_ACCOUNT = 'fleetkit-gateway'
