// Failure codes of the fleet definition: reading fleet.yaml, its schema, the semantic
// rules and the transition rules of `fleetkit validate --since` (docs/runbooks.md "Definition").
import type { FailureCodeSpec } from '../failure-code-spec.js'

export const DEFINITION_CODES = {
  DEFINITION_MISSING: { summary: 'The fleet definition file does not exist at the path given.', person: false },
  DEFINITION_UNREADABLE: { summary: 'The fleet definition is not well-formed YAML or JSON.', person: true },
  DEFINITION_INVALID: {
    summary: 'The fleet definition breaks one or more rules; every error is listed.',
    person: true,
  },
  DEFINITION_FIELD_UNKNOWN: { summary: 'A field the schema does not know (often a typo).', person: true },
  DEFINITION_FIELD_MISSING: { summary: 'A required field is missing.', person: true },
  DEFINITION_VALUE_INVALID: { summary: 'A value has the wrong type, format or range for the schema.', person: true },
  DEFINITION_TOO_COMPLEX: {
    summary: 'The definition is over the size limit, nests too deep or expands through aliases past the value limit.',
    person: true,
  },
  DEFINITION_IS_EXAMPLE: {
    summary: 'The definition says example: true, and this command would reach real hosts or a provider.',
    person: true,
  },
  DEFINITION_SECRET_FOUND: {
    summary: 'A private key, token, credential or .env payload is in the definition.',
    person: true,
  },
  HOST_POLICY_INVALID: { summary: 'policy/host-policy.yaml cannot be read or lacks a required key.', person: true },
  NODE_ID_DUPLICATE: { summary: 'Two nodes share one id.', person: true },
  POOL_REFERENCE_UNKNOWN: { summary: 'A node names a pool that is not declared.', person: true },
  CANARY_UNKNOWN: { summary: 'The canary names a node that is not declared.', person: true },
  POOL_CAPACITY_EXCEEDED: { summary: 'Active and drained nodes reserve more than their pool budget.', person: true },
  NODE_CAPACITY_UNDECLARED: {
    summary: 'An active or drained node has neither maxCapacity nor a known server type.',
    person: true,
  },
  DOCKER_NETWORK_POLICY_INVALID: {
    summary: 'A docker network policy has a malformed CIDR, prefix or bridge address.',
    person: true,
  },
  DOCKER_NETWORK_POLICY_OVERLAP: {
    summary: 'Docker network ranges of two pools, or a bridge and a pool, overlap.',
    person: true,
  },
  DOCKER_NETWORK_POLICY_TOO_SMALL: {
    summary: 'A docker network range holds fewer subnets or addresses than its runners need.',
    person: true,
  },
  DOCUMENTATION_RANGE_REFUSED: {
    summary: 'An RFC 5737/3849 documentation range is used in a definition that is not marked example: true.',
    person: true,
  },
  DOCKER_NETWORK_BASE_CONFLICT: {
    summary: "A docker network base overlaps the nodes' addresses, the operator CIDRs or Docker's default bridge.",
    person: true,
  },
  NODE_CAPACITY_ABOVE_SERVER_TYPE: {
    summary: "A node's maxCapacity is above what its server type offers after the host reserve.",
    person: true,
  },
  NODE_REGION_OUTSIDE_POOL: { summary: "A node's region is not one of its pool's regions.", person: true },
  SERVER_TYPE_ARCHITECTURE_MISMATCH: {
    summary: "A node's server type has another CPU architecture than its pool's.",
    person: true,
  },
  NODE_SSH_ADDRESS_DUPLICATE: { summary: 'Two nodes have the same SSH address (host and port).', person: true },
  NODE_SSH_HOST_MISSING: {
    summary:
      'A node declares ssh without host in a pool without a provider: only a node fleetkit provisions has its address from the state.',
    person: true,
  },
  EXPOSURE_SSH_PORT_WITHOUT_PUBLIC_SSH: {
    summary: 'Port 22 is in publicPorts while publicSsh is false.',
    person: true,
  },
  NODE_UNREACHABLE_BY_SYNC: {
    summary:
      'validate warns: a node fleetkit sync targets declares no ssh block (host and account), so sync could never reach it.',
    person: true,
  },
  NODE_SSH_USER_ROOT: { summary: 'A node logs in as root over SSH; fleetkit needs a non-root account.', person: true },
  NODE_CONTAINER_PROVISIONED: {
    summary: 'A node declares container: true and a serverType; a provider server is a VM, not a container.',
    person: true,
  },
  NODE_SSH_USER_RESERVED: {
    summary: "A node logs in as one of fleetkit's own service accounts (fleetkit-agent, fleetkit-gateway) over SSH.",
    person: true,
  },
  NODE_SIZE_BELOW_MINIMUM: { summary: 'A node or server type is smaller than the host policy minimum.', person: true },
  SERVER_TYPE_UNKNOWN: { summary: 'A server type is not in the host policy catalog.', person: true },
  REGION_UNKNOWN: { summary: 'A region is not in the host policy catalog.', person: true },
  DATA_VOLUME_MOUNT_RESERVED: {
    summary: 'A data volume mount point is /, not normalised, or over fleetkit or system paths.',
    person: true,
  },
  DEFINITION_REVISION_UNKNOWN: {
    summary: 'The --since revision, or the file at that revision, does not exist in Git.',
    person: false,
  },
  DEFINITION_REVISION_INVALID: {
    summary: 'The definition at the --since revision does not parse or match the schema.',
    person: true,
  },
  TRANSITION_NODE_REMOVAL_UNSAFE: { summary: 'A removed node still holds allocations or live leases.', person: true },
  TRANSITION_BUDGET_SHRINK_UNSAFE: {
    summary: 'A pool budget shrinks below what its nodes still reserve.',
    person: true,
  },
  TRANSITION_ENABLE_WITHOUT_CAPACITY: {
    summary: 'A node goes from disabled to active without capacity for it.',
    person: true,
  },
  TRANSITION_UNPROVEN: {
    summary: 'An image or agent version changes without a recorded canary run of it.',
    person: true,
  },
} as const satisfies Record<string, FailureCodeSpec>

export type DefinitionCode = keyof typeof DEFINITION_CODES
