// The grammar of a check ID (`host:br-netfilter`), apart from the registry file reader so
// the agent bundle and the wire contract can use it without reading schema/check-ids.json.
export const CHECK_ID_PATTERN = /^[a-z]+:[a-z0-9-]+$/
