/* eslint-disable */
// @ts-nocheck
// GENERATED from schema/fleet.schema.json by scripts/generate-fleet-validator.ts: do not edit.
// Regenerate: npx tsx scripts/generate-fleet-validator.ts (a unit test fails when it is stale).
import { createRequire } from 'node:module'
const require = createRequire(import.meta.url)

export const validate = validate20;
export default validate20;
const schema31 = {"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"https://fleetkit.dev/schema/fleet.schema.json","title":"fleetkit fleet definition (fleet.yaml)","description":"The shape of fleet.yaml. Rules across fields (references, capacity, network arithmetic, secrets, sizing) are checked after this schema by src/definition/rules/.","type":"object","additionalProperties":false,"required":["version","fleet","gateway","release","operators","pools"],"properties":{"version":{"description":"Schema version of this file.","const":1},"fleet":{"description":"The fleet's name, a DNS label.","$ref":"#/$defs/dnsLabel"},"example":{"description":"This file is an example (documentation ranges accepted; commands that reach real hosts or providers refuse it).","type":"boolean"},"gateway":{"type":"object","additionalProperties":false,"required":["url","enrollUrl"],"properties":{"url":{"description":"Agent mTLS routes.","$ref":"#/$defs/httpsUrl"},"enrollUrl":{"description":"The enrollment listener (server-auth TLS).","$ref":"#/$defs/httpsUrl"},"replicas":{"description":"More gateways on the same database and PKI: agents start at one chosen by their node ID and move to the next when theirs fails.","type":"array","maxItems":15,"uniqueItems":true,"items":{"type":"object","additionalProperties":false,"required":["url","enrollUrl"],"properties":{"url":{"$ref":"#/$defs/httpsUrl"},"enrollUrl":{"$ref":"#/$defs/httpsUrl"}}}}}},"release":{"type":"object","additionalProperties":false,"required":["url","publicKey","version"],"properties":{"url":{"description":"https base of agent releases.","$ref":"#/$defs/httpsUrl"},"publicKey":{"description":"Base64 of the raw 32-byte Ed25519 release signing key.","$comment":"grammar:releasePublicKey (src/definition/grammar.ts)","type":"string","pattern":"^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$"},"version":{"description":"Pinned agent version.","$ref":"#/$defs/version"},"caFile":{"description":"CA bundle of a private release mirror.","$comment":"grammar:filePath (src/definition/grammar.ts)","type":"string","pattern":"^[^\\u0000-\\u001f\\u007f]+$","maxLength":4096}}},"operators":{"type":"object","additionalProperties":false,"required":["cidrs","sshKeys"],"properties":{"cidrs":{"description":"Networks that may reach SSH (IPv4 or IPv6 CIDR).","type":"array","minItems":1,"uniqueItems":true,"items":{"$ref":"#/$defs/cidr"}},"sshKeys":{"description":"Public keys put on hosts for operators.","type":"array","minItems":1,"uniqueItems":true,"items":{"$ref":"#/$defs/sshPublicKey"}}}},"providers":{"type":"object","additionalProperties":false,"properties":{"hetzner":{"type":"object","additionalProperties":false,"properties":{"tokenEnv":{"description":"Environment variable that holds the API token (default HETZNER_API_TOKEN). The token itself never goes in this file.","$comment":"grammar:envName (src/definition/grammar.ts)","type":"string","pattern":"^[A-Z_][A-Z0-9_]{0,127}$"},"sshKeys":{"description":"Names of SSH keys registered at Hetzner.","type":"array","uniqueItems":true,"items":{"$comment":"grammar:keyName (src/definition/grammar.ts)","type":"string","pattern":"^[^\\u0000-\\u001f\\u007f]{1,128}$"}},"endpoint":{"description":"API endpoint (a stub or a proxy).","$comment":"grammar:endpointUrl (src/definition/grammar.ts)","type":"string","pattern":"^(?!.*\\.\\.)https?://[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?(?:/[A-Za-z0-9._~/-]*)?$","maxLength":2048}}}}},"pools":{"description":"One entry per pool, keyed by a DNS label.","type":"object","minProperties":1,"propertyNames":{"$ref":"#/$defs/dnsLabel"},"additionalProperties":{"$ref":"#/$defs/pool"}},"nodes":{"description":"Hosts that exist outside provisioning, and pins for provisioned ones.","type":"array","items":{"$ref":"#/$defs/node"}},"canary":{"description":"The node that proves a new revision first.","$ref":"#/$defs/nodeId"},"features":{"$ref":"#/$defs/features"},"exposure":{"$ref":"#/$defs/exposure"}},"$defs":{"dnsLabel":{"$comment":"grammar:dnsLabel (src/definition/grammar.ts)","type":"string","pattern":"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"},"nodeId":{"$comment":"grammar:nodeId (src/definition/grammar.ts)","type":"string","pattern":"^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$"},"httpsUrl":{"$comment":"grammar:httpsUrl (src/definition/grammar.ts)","type":"string","pattern":"^(?!.*\\.\\.)https://[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?(?:/[A-Za-z0-9._~/-]*)?$","maxLength":2048},"version":{"$comment":"grammar:releaseVersion (src/definition/grammar.ts)","type":"string","pattern":"^[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z][0-9A-Za-z.-]*)?$","maxLength":64},"cidr":{"$comment":"grammar:cidr (src/definition/grammar.ts)","type":"string","pattern":"^((?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(\\.(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}/(3[0-2]|[12]?[0-9])|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*/(12[0-8]|1[01][0-9]|[1-9]?[0-9]))$","maxLength":49},"sshPublicKey":{"description":"An OpenSSH public key line: type, base64 body, optional comment.","$comment":"grammar:sshPublicKey (src/definition/grammar.ts)","type":"string","pattern":"^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp256|ecdsa-sha2-nistp384|ecdsa-sha2-nistp521|sk-ssh-ed25519@openssh\\.com|sk-ecdsa-sha2-nistp256@openssh\\.com) [A-Za-z0-9+/]+={0,2}( [A-Za-z0-9@._+-]{1,100})?$","maxLength":16384},"capacity":{"type":"object","additionalProperties":false,"required":["cpu","memoryMiB","diskGiB"],"properties":{"cpu":{"description":"vCPUs.","$comment":"At most what the state's numeric(8, 2) column holds: 1e308 was accepted and shown as Infinity.","type":"number","exclusiveMinimum":0,"maximum":999999},"memoryMiB":{"$comment":"At most the state's integer column: 2^53 + 1 was accepted and silently rounded.","type":"integer","minimum":1,"maximum":2147483647},"diskGiB":{"$comment":"At most the state's integer column.","type":"integer","minimum":1,"maximum":2147483647}}},"features":{"type":"object","additionalProperties":false,"properties":{"containers":{"type":"boolean"},"tailscale":{"description":"Install Tailscale and join the tailnet with tags from the pool (the auth key comes from FLEETKIT_TAILSCALE_AUTH_KEY on the operator's machine, never from this file).","type":"boolean"},"session":{"enum":["headless"]},"preset":{"$comment":"grammar:imageName (src/definition/grammar.ts)","type":"string","pattern":"^[a-z0-9][a-z0-9._-]{0,63}$"}}},"exposure":{"type":"object","additionalProperties":false,"properties":{"publicSsh":{"description":"Break-glass: SSH open to the world.","type":"boolean"},"publicPorts":{"type":"array","uniqueItems":true,"items":{"type":"object","additionalProperties":false,"required":["protocol","port"],"properties":{"protocol":{"enum":["tcp","udp"]},"port":{"type":"integer","minimum":1,"maximum":65535}}}},"otherListeners":{"enum":["warn","fail"]}}},"dockerNetworkPolicy":{"type":"object","additionalProperties":false,"required":["base","prefix","maxRunners","networksPerRunner","reserveSubnets"],"properties":{"base":{"description":"IPv4 CIDR the pool's container networks are cut from.","type":"string","maxLength":18},"prefix":{"description":"Prefix length of each allocated network.","type":"integer","minimum":0,"maximum":32},"maxRunners":{"type":"integer","minimum":1},"networksPerRunner":{"type":"integer","minimum":1},"reserveSubnets":{"type":"integer","minimum":0},"defaultBridgeCidr":{"description":"docker0 address with prefix (bip), e.g. 10.199.0.1/24.","type":"string","maxLength":18}}},"pool":{"type":"object","additionalProperties":false,"required":["role","capacityBudget"],"properties":{"role":{"$ref":"#/$defs/dnsLabel"},"ingress":{"description":"80/443 open from anywhere.","type":"boolean"},"stateful":{"description":"Its nodes hold state (a database): when one is lost its allocations stay, stranded, until a person releases them (fleetkit alloc release --stranded) or the node heartbeats again. Default false: a lost node's allocations are released.","type":"boolean"},"capacityBudget":{"$ref":"#/$defs/capacity"},"serverType":{"$comment":"grammar:providerName (src/definition/grammar.ts)","type":"string","pattern":"^[a-z0-9][a-z0-9-]{0,31}$"},"image":{"$comment":"grammar:imageName (src/definition/grammar.ts)","type":"string","pattern":"^[a-z0-9][a-z0-9._-]{0,63}$"},"regions":{"type":"array","minItems":1,"uniqueItems":true,"items":{"$comment":"grammar:providerName (src/definition/grammar.ts)","type":"string","pattern":"^[a-z0-9][a-z0-9-]{0,31}$"}},"features":{"$ref":"#/$defs/features"},"exposure":{"$ref":"#/$defs/exposure"},"dockerNetworkPolicy":{"$ref":"#/$defs/dockerNetworkPolicy"}}},"node":{"type":"object","additionalProperties":false,"required":["id","pool","state"],"properties":{"id":{"$ref":"#/$defs/nodeId"},"pool":{"$ref":"#/$defs/dnsLabel"},"state":{"enum":["active","drained","disabled"]},"ssh":{"type":"object","additionalProperties":false,"required":["user"],"properties":{"host":{"description":"Host name, tailnet name or IP address. Optional for a node in a pool with a provider (providers.hetzner declared and the pool names its image): its address is the server fleetkit provisioned, recorded in the state; required for any other node (NODE_SSH_HOST_MISSING).","$comment":"grammar:sshHost (src/definition/grammar.ts)","type":"string","pattern":"^(?=.{1,253}$)((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)$"},"user":{"$comment":"grammar:posixUser (src/definition/grammar.ts)","type":"string","pattern":"^[a-z_][a-z0-9_-]{0,31}$"},"port":{"type":"integer","minimum":1,"maximum":65535}}},"hostKey":{"description":"Pinned SSH host public key.","$ref":"#/$defs/sshPublicKey"},"agentVersion":{"description":"This node's own agent version, ahead of release.version: the canary proves a new version before the fleet takes it.","$ref":"#/$defs/version"},"container":{"description":"The host is a container (systemd-nspawn, LXC, ...): it shares its host's kernel. Preflight accepts it (and refuses a VM or bare metal that declares it); the kernel parts, br_netfilter and the bridge sysctls, are reported not applicable.","type":"boolean"},"features":{"$ref":"#/$defs/features"},"exposure":{"$ref":"#/$defs/exposure"},"dataVolume":{"type":"object","additionalProperties":false,"required":["device","filesystem","mountPoint"],"properties":{"device":{"description":"A block device (/dev/...) or a provider volume name.","$comment":"grammar:device (src/definition/grammar.ts)","type":"string","pattern":"^(/dev/(?!(?:.*/)?\\.\\.(?:/|$))[A-Za-z0-9/_.-]{1,250}|[a-z0-9][a-z0-9-]{0,62})$"},"filesystem":{"const":"xfs"},"mountPoint":{"$comment":"grammar:mountPoint (src/definition/grammar.ts)","type":"string","pattern":"^/(?!(?:.*/)?\\.\\.(?:/|$))[A-Za-z0-9._/-]{0,254}$"}}},"maxCapacity":{"$ref":"#/$defs/capacity"},"region":{"$comment":"grammar:providerName (src/definition/grammar.ts)","type":"string","pattern":"^[a-z0-9][a-z0-9-]{0,31}$"},"serverType":{"$comment":"grammar:providerName (src/definition/grammar.ts)","type":"string","pattern":"^[a-z0-9][a-z0-9-]{0,31}$"}}}}};
const schema32 = {"$comment":"grammar:dnsLabel (src/definition/grammar.ts)","type":"string","pattern":"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"};
const schema33 = {"$comment":"grammar:httpsUrl (src/definition/grammar.ts)","type":"string","pattern":"^(?!.*\\.\\.)https://[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?(?:/[A-Za-z0-9._~/-]*)?$","maxLength":2048};
const schema38 = {"$comment":"grammar:releaseVersion (src/definition/grammar.ts)","type":"string","pattern":"^[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z][0-9A-Za-z.-]*)?$","maxLength":64};
const schema39 = {"$comment":"grammar:cidr (src/definition/grammar.ts)","type":"string","pattern":"^((?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(\\.(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}/(3[0-2]|[12]?[0-9])|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*/(12[0-8]|1[01][0-9]|[1-9]?[0-9]))$","maxLength":49};
const schema40 = {"description":"An OpenSSH public key line: type, base64 body, optional comment.","$comment":"grammar:sshPublicKey (src/definition/grammar.ts)","type":"string","pattern":"^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp256|ecdsa-sha2-nistp384|ecdsa-sha2-nistp521|sk-ssh-ed25519@openssh\\.com|sk-ecdsa-sha2-nistp256@openssh\\.com) [A-Za-z0-9+/]+={0,2}( [A-Za-z0-9@._+-]{1,100})?$","maxLength":16384};
const schema49 = {"$comment":"grammar:nodeId (src/definition/grammar.ts)","type":"string","pattern":"^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$"};
const schema45 = {"type":"object","additionalProperties":false,"properties":{"containers":{"type":"boolean"},"tailscale":{"description":"Install Tailscale and join the tailnet with tags from the pool (the auth key comes from FLEETKIT_TAILSCALE_AUTH_KEY on the operator's machine, never from this file).","type":"boolean"},"session":{"enum":["headless"]},"preset":{"$comment":"grammar:imageName (src/definition/grammar.ts)","type":"string","pattern":"^[a-z0-9][a-z0-9._-]{0,63}$"}}};
const schema46 = {"type":"object","additionalProperties":false,"properties":{"publicSsh":{"description":"Break-glass: SSH open to the world.","type":"boolean"},"publicPorts":{"type":"array","uniqueItems":true,"items":{"type":"object","additionalProperties":false,"required":["protocol","port"],"properties":{"protocol":{"enum":["tcp","udp"]},"port":{"type":"integer","minimum":1,"maximum":65535}}}},"otherListeners":{"enum":["warn","fail"]}}};
const func1 = Object.prototype.hasOwnProperty;
const func2 = require("ajv/dist/runtime/ucs2length").default;
const func0 = require("ajv/dist/runtime/equal").default;
const pattern4 = new RegExp("^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$", "u");
const pattern5 = new RegExp("^(?!.*\\.\\.)https://[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?(?:/[A-Za-z0-9._~/-]*)?$", "u");
const pattern10 = new RegExp("^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$", "u");
const pattern11 = new RegExp("^[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z][0-9A-Za-z.-]*)?$", "u");
const pattern12 = new RegExp("^[^\\u0000-\\u001f\\u007f]+$", "u");
const pattern13 = new RegExp("^((?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(\\.(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}/(3[0-2]|[12]?[0-9])|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*/(12[0-8]|1[01][0-9]|[1-9]?[0-9]))$", "u");
const pattern14 = new RegExp("^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp256|ecdsa-sha2-nistp384|ecdsa-sha2-nistp521|sk-ssh-ed25519@openssh\\.com|sk-ecdsa-sha2-nistp256@openssh\\.com) [A-Za-z0-9+/]+={0,2}( [A-Za-z0-9@._+-]{1,100})?$", "u");
const pattern15 = new RegExp("^[A-Z_][A-Z0-9_]{0,127}$", "u");
const pattern16 = new RegExp("^[^\\u0000-\\u001f\\u007f]{1,128}$", "u");
const pattern17 = new RegExp("^(?!.*\\.\\.)https?://[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?(?:/[A-Za-z0-9._~/-]*)?$", "u");
const pattern24 = new RegExp("^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$", "u");
const pattern21 = new RegExp("^[a-z0-9][a-z0-9._-]{0,63}$", "u");
const schema42 = {"type":"object","additionalProperties":false,"required":["role","capacityBudget"],"properties":{"role":{"$ref":"#/$defs/dnsLabel"},"ingress":{"description":"80/443 open from anywhere.","type":"boolean"},"stateful":{"description":"Its nodes hold state (a database): when one is lost its allocations stay, stranded, until a person releases them (fleetkit alloc release --stranded) or the node heartbeats again. Default false: a lost node's allocations are released.","type":"boolean"},"capacityBudget":{"$ref":"#/$defs/capacity"},"serverType":{"$comment":"grammar:providerName (src/definition/grammar.ts)","type":"string","pattern":"^[a-z0-9][a-z0-9-]{0,31}$"},"image":{"$comment":"grammar:imageName (src/definition/grammar.ts)","type":"string","pattern":"^[a-z0-9][a-z0-9._-]{0,63}$"},"regions":{"type":"array","minItems":1,"uniqueItems":true,"items":{"$comment":"grammar:providerName (src/definition/grammar.ts)","type":"string","pattern":"^[a-z0-9][a-z0-9-]{0,31}$"}},"features":{"$ref":"#/$defs/features"},"exposure":{"$ref":"#/$defs/exposure"},"dockerNetworkPolicy":{"$ref":"#/$defs/dockerNetworkPolicy"}}};
const schema44 = {"type":"object","additionalProperties":false,"required":["cpu","memoryMiB","diskGiB"],"properties":{"cpu":{"description":"vCPUs.","$comment":"At most what the state's numeric(8, 2) column holds: 1e308 was accepted and shown as Infinity.","type":"number","exclusiveMinimum":0,"maximum":999999},"memoryMiB":{"$comment":"At most the state's integer column: 2^53 + 1 was accepted and silently rounded.","type":"integer","minimum":1,"maximum":2147483647},"diskGiB":{"$comment":"At most the state's integer column.","type":"integer","minimum":1,"maximum":2147483647}}};
const schema47 = {"type":"object","additionalProperties":false,"required":["base","prefix","maxRunners","networksPerRunner","reserveSubnets"],"properties":{"base":{"description":"IPv4 CIDR the pool's container networks are cut from.","type":"string","maxLength":18},"prefix":{"description":"Prefix length of each allocated network.","type":"integer","minimum":0,"maximum":32},"maxRunners":{"type":"integer","minimum":1},"networksPerRunner":{"type":"integer","minimum":1},"reserveSubnets":{"type":"integer","minimum":0},"defaultBridgeCidr":{"description":"docker0 address with prefix (bip), e.g. 10.199.0.1/24.","type":"string","maxLength":18}}};
const pattern20 = new RegExp("^[a-z0-9][a-z0-9-]{0,31}$", "u");

function validate21(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
let vErrors = null;
let errors = 0;
const evaluated0 = validate21.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if(data && typeof data == "object" && !Array.isArray(data)){
if(data.role === undefined){
const err0 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "role"},message:"must have required property '"+"role"+"'",schema:schema42.required,parentSchema:schema42,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
if(data.capacityBudget === undefined){
const err1 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "capacityBudget"},message:"must have required property '"+"capacityBudget"+"'",schema:schema42.required,parentSchema:schema42,data};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
for(const key0 in data){
if(!(func1.call(schema42.properties, key0))){
const err2 = {instancePath,schemaPath:"#/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties",schema:false,parentSchema:schema42,data};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
}
if(data.role !== undefined){
let data0 = data.role;
if(typeof data0 === "string"){
if(!pattern4.test(data0)){
const err3 = {instancePath:instancePath+"/role",schemaPath:"#/$defs/dnsLabel/pattern",keyword:"pattern",params:{pattern: "^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"},message:"must match pattern \""+"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"+"\"",schema:"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$",parentSchema:schema32,data:data0};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
}
else {
const err4 = {instancePath:instancePath+"/role",schemaPath:"#/$defs/dnsLabel/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema32.type,parentSchema:schema32,data:data0};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
}
if(data.ingress !== undefined){
let data1 = data.ingress;
if(typeof data1 !== "boolean"){
const err5 = {instancePath:instancePath+"/ingress",schemaPath:"#/properties/ingress/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema42.properties.ingress.type,parentSchema:schema42.properties.ingress,data:data1};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
}
if(data.stateful !== undefined){
let data2 = data.stateful;
if(typeof data2 !== "boolean"){
const err6 = {instancePath:instancePath+"/stateful",schemaPath:"#/properties/stateful/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema42.properties.stateful.type,parentSchema:schema42.properties.stateful,data:data2};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
}
if(data.capacityBudget !== undefined){
let data3 = data.capacityBudget;
if(data3 && typeof data3 == "object" && !Array.isArray(data3)){
if(data3.cpu === undefined){
const err7 = {instancePath:instancePath+"/capacityBudget",schemaPath:"#/$defs/capacity/required",keyword:"required",params:{missingProperty: "cpu"},message:"must have required property '"+"cpu"+"'",schema:schema44.required,parentSchema:schema44,data:data3};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
}
if(data3.memoryMiB === undefined){
const err8 = {instancePath:instancePath+"/capacityBudget",schemaPath:"#/$defs/capacity/required",keyword:"required",params:{missingProperty: "memoryMiB"},message:"must have required property '"+"memoryMiB"+"'",schema:schema44.required,parentSchema:schema44,data:data3};
if(vErrors === null){
vErrors = [err8];
}
else {
vErrors.push(err8);
}
errors++;
}
if(data3.diskGiB === undefined){
const err9 = {instancePath:instancePath+"/capacityBudget",schemaPath:"#/$defs/capacity/required",keyword:"required",params:{missingProperty: "diskGiB"},message:"must have required property '"+"diskGiB"+"'",schema:schema44.required,parentSchema:schema44,data:data3};
if(vErrors === null){
vErrors = [err9];
}
else {
vErrors.push(err9);
}
errors++;
}
for(const key1 in data3){
if(!(((key1 === "cpu") || (key1 === "memoryMiB")) || (key1 === "diskGiB"))){
const err10 = {instancePath:instancePath+"/capacityBudget",schemaPath:"#/$defs/capacity/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key1},message:"must NOT have additional properties",schema:false,parentSchema:schema44,data:data3};
if(vErrors === null){
vErrors = [err10];
}
else {
vErrors.push(err10);
}
errors++;
}
}
if(data3.cpu !== undefined){
let data4 = data3.cpu;
if((typeof data4 == "number") && (isFinite(data4))){
if(data4 > 999999 || isNaN(data4)){
const err11 = {instancePath:instancePath+"/capacityBudget/cpu",schemaPath:"#/$defs/capacity/properties/cpu/maximum",keyword:"maximum",params:{comparison: "<=", limit: 999999},message:"must be <= 999999",schema:999999,parentSchema:schema44.properties.cpu,data:data4};
if(vErrors === null){
vErrors = [err11];
}
else {
vErrors.push(err11);
}
errors++;
}
if(data4 <= 0 || isNaN(data4)){
const err12 = {instancePath:instancePath+"/capacityBudget/cpu",schemaPath:"#/$defs/capacity/properties/cpu/exclusiveMinimum",keyword:"exclusiveMinimum",params:{comparison: ">", limit: 0},message:"must be > 0",schema:0,parentSchema:schema44.properties.cpu,data:data4};
if(vErrors === null){
vErrors = [err12];
}
else {
vErrors.push(err12);
}
errors++;
}
}
else {
const err13 = {instancePath:instancePath+"/capacityBudget/cpu",schemaPath:"#/$defs/capacity/properties/cpu/type",keyword:"type",params:{type: "number"},message:"must be number",schema:schema44.properties.cpu.type,parentSchema:schema44.properties.cpu,data:data4};
if(vErrors === null){
vErrors = [err13];
}
else {
vErrors.push(err13);
}
errors++;
}
}
if(data3.memoryMiB !== undefined){
let data5 = data3.memoryMiB;
if(!(((typeof data5 == "number") && (!(data5 % 1) && !isNaN(data5))) && (isFinite(data5)))){
const err14 = {instancePath:instancePath+"/capacityBudget/memoryMiB",schemaPath:"#/$defs/capacity/properties/memoryMiB/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema44.properties.memoryMiB.type,parentSchema:schema44.properties.memoryMiB,data:data5};
if(vErrors === null){
vErrors = [err14];
}
else {
vErrors.push(err14);
}
errors++;
}
if((typeof data5 == "number") && (isFinite(data5))){
if(data5 > 2147483647 || isNaN(data5)){
const err15 = {instancePath:instancePath+"/capacityBudget/memoryMiB",schemaPath:"#/$defs/capacity/properties/memoryMiB/maximum",keyword:"maximum",params:{comparison: "<=", limit: 2147483647},message:"must be <= 2147483647",schema:2147483647,parentSchema:schema44.properties.memoryMiB,data:data5};
if(vErrors === null){
vErrors = [err15];
}
else {
vErrors.push(err15);
}
errors++;
}
if(data5 < 1 || isNaN(data5)){
const err16 = {instancePath:instancePath+"/capacityBudget/memoryMiB",schemaPath:"#/$defs/capacity/properties/memoryMiB/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1",schema:1,parentSchema:schema44.properties.memoryMiB,data:data5};
if(vErrors === null){
vErrors = [err16];
}
else {
vErrors.push(err16);
}
errors++;
}
}
}
if(data3.diskGiB !== undefined){
let data6 = data3.diskGiB;
if(!(((typeof data6 == "number") && (!(data6 % 1) && !isNaN(data6))) && (isFinite(data6)))){
const err17 = {instancePath:instancePath+"/capacityBudget/diskGiB",schemaPath:"#/$defs/capacity/properties/diskGiB/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema44.properties.diskGiB.type,parentSchema:schema44.properties.diskGiB,data:data6};
if(vErrors === null){
vErrors = [err17];
}
else {
vErrors.push(err17);
}
errors++;
}
if((typeof data6 == "number") && (isFinite(data6))){
if(data6 > 2147483647 || isNaN(data6)){
const err18 = {instancePath:instancePath+"/capacityBudget/diskGiB",schemaPath:"#/$defs/capacity/properties/diskGiB/maximum",keyword:"maximum",params:{comparison: "<=", limit: 2147483647},message:"must be <= 2147483647",schema:2147483647,parentSchema:schema44.properties.diskGiB,data:data6};
if(vErrors === null){
vErrors = [err18];
}
else {
vErrors.push(err18);
}
errors++;
}
if(data6 < 1 || isNaN(data6)){
const err19 = {instancePath:instancePath+"/capacityBudget/diskGiB",schemaPath:"#/$defs/capacity/properties/diskGiB/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1",schema:1,parentSchema:schema44.properties.diskGiB,data:data6};
if(vErrors === null){
vErrors = [err19];
}
else {
vErrors.push(err19);
}
errors++;
}
}
}
}
else {
const err20 = {instancePath:instancePath+"/capacityBudget",schemaPath:"#/$defs/capacity/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema44.type,parentSchema:schema44,data:data3};
if(vErrors === null){
vErrors = [err20];
}
else {
vErrors.push(err20);
}
errors++;
}
}
if(data.serverType !== undefined){
let data7 = data.serverType;
if(typeof data7 === "string"){
if(!pattern20.test(data7)){
const err21 = {instancePath:instancePath+"/serverType",schemaPath:"#/properties/serverType/pattern",keyword:"pattern",params:{pattern: "^[a-z0-9][a-z0-9-]{0,31}$"},message:"must match pattern \""+"^[a-z0-9][a-z0-9-]{0,31}$"+"\"",schema:"^[a-z0-9][a-z0-9-]{0,31}$",parentSchema:schema42.properties.serverType,data:data7};
if(vErrors === null){
vErrors = [err21];
}
else {
vErrors.push(err21);
}
errors++;
}
}
else {
const err22 = {instancePath:instancePath+"/serverType",schemaPath:"#/properties/serverType/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema42.properties.serverType.type,parentSchema:schema42.properties.serverType,data:data7};
if(vErrors === null){
vErrors = [err22];
}
else {
vErrors.push(err22);
}
errors++;
}
}
if(data.image !== undefined){
let data8 = data.image;
if(typeof data8 === "string"){
if(!pattern21.test(data8)){
const err23 = {instancePath:instancePath+"/image",schemaPath:"#/properties/image/pattern",keyword:"pattern",params:{pattern: "^[a-z0-9][a-z0-9._-]{0,63}$"},message:"must match pattern \""+"^[a-z0-9][a-z0-9._-]{0,63}$"+"\"",schema:"^[a-z0-9][a-z0-9._-]{0,63}$",parentSchema:schema42.properties.image,data:data8};
if(vErrors === null){
vErrors = [err23];
}
else {
vErrors.push(err23);
}
errors++;
}
}
else {
const err24 = {instancePath:instancePath+"/image",schemaPath:"#/properties/image/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema42.properties.image.type,parentSchema:schema42.properties.image,data:data8};
if(vErrors === null){
vErrors = [err24];
}
else {
vErrors.push(err24);
}
errors++;
}
}
if(data.regions !== undefined){
let data9 = data.regions;
if(Array.isArray(data9)){
if(data9.length < 1){
const err25 = {instancePath:instancePath+"/regions",schemaPath:"#/properties/regions/minItems",keyword:"minItems",params:{limit: 1},message:"must NOT have fewer than 1 items",schema:1,parentSchema:schema42.properties.regions,data:data9};
if(vErrors === null){
vErrors = [err25];
}
else {
vErrors.push(err25);
}
errors++;
}
const len0 = data9.length;
for(let i0=0; i0<len0; i0++){
let data10 = data9[i0];
if(typeof data10 === "string"){
if(!pattern20.test(data10)){
const err26 = {instancePath:instancePath+"/regions/" + i0,schemaPath:"#/properties/regions/items/pattern",keyword:"pattern",params:{pattern: "^[a-z0-9][a-z0-9-]{0,31}$"},message:"must match pattern \""+"^[a-z0-9][a-z0-9-]{0,31}$"+"\"",schema:"^[a-z0-9][a-z0-9-]{0,31}$",parentSchema:schema42.properties.regions.items,data:data10};
if(vErrors === null){
vErrors = [err26];
}
else {
vErrors.push(err26);
}
errors++;
}
}
else {
const err27 = {instancePath:instancePath+"/regions/" + i0,schemaPath:"#/properties/regions/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema42.properties.regions.items.type,parentSchema:schema42.properties.regions.items,data:data10};
if(vErrors === null){
vErrors = [err27];
}
else {
vErrors.push(err27);
}
errors++;
}
}
let i1 = data9.length;
let j0;
if(i1 > 1){
const indices0 = {};
for(;i1--;){
let item0 = data9[i1];
if(typeof item0 !== "string"){
continue;
}
if(typeof indices0[item0] == "number"){
j0 = indices0[item0];
const err28 = {instancePath:instancePath+"/regions",schemaPath:"#/properties/regions/uniqueItems",keyword:"uniqueItems",params:{i: i1, j: j0},message:"must NOT have duplicate items (items ## "+j0+" and "+i1+" are identical)",schema:true,parentSchema:schema42.properties.regions,data:data9};
if(vErrors === null){
vErrors = [err28];
}
else {
vErrors.push(err28);
}
errors++;
break;
}
indices0[item0] = i1;
}
}
}
else {
const err29 = {instancePath:instancePath+"/regions",schemaPath:"#/properties/regions/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema42.properties.regions.type,parentSchema:schema42.properties.regions,data:data9};
if(vErrors === null){
vErrors = [err29];
}
else {
vErrors.push(err29);
}
errors++;
}
}
if(data.features !== undefined){
let data11 = data.features;
if(data11 && typeof data11 == "object" && !Array.isArray(data11)){
for(const key2 in data11){
if(!((((key2 === "containers") || (key2 === "tailscale")) || (key2 === "session")) || (key2 === "preset"))){
const err30 = {instancePath:instancePath+"/features",schemaPath:"#/$defs/features/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key2},message:"must NOT have additional properties",schema:false,parentSchema:schema45,data:data11};
if(vErrors === null){
vErrors = [err30];
}
else {
vErrors.push(err30);
}
errors++;
}
}
if(data11.containers !== undefined){
let data12 = data11.containers;
if(typeof data12 !== "boolean"){
const err31 = {instancePath:instancePath+"/features/containers",schemaPath:"#/$defs/features/properties/containers/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema45.properties.containers.type,parentSchema:schema45.properties.containers,data:data12};
if(vErrors === null){
vErrors = [err31];
}
else {
vErrors.push(err31);
}
errors++;
}
}
if(data11.tailscale !== undefined){
let data13 = data11.tailscale;
if(typeof data13 !== "boolean"){
const err32 = {instancePath:instancePath+"/features/tailscale",schemaPath:"#/$defs/features/properties/tailscale/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema45.properties.tailscale.type,parentSchema:schema45.properties.tailscale,data:data13};
if(vErrors === null){
vErrors = [err32];
}
else {
vErrors.push(err32);
}
errors++;
}
}
if(data11.session !== undefined){
let data14 = data11.session;
if(!(data14 === "headless")){
const err33 = {instancePath:instancePath+"/features/session",schemaPath:"#/$defs/features/properties/session/enum",keyword:"enum",params:{allowedValues: schema45.properties.session.enum},message:"must be equal to one of the allowed values",schema:schema45.properties.session.enum,parentSchema:schema45.properties.session,data:data14};
if(vErrors === null){
vErrors = [err33];
}
else {
vErrors.push(err33);
}
errors++;
}
}
if(data11.preset !== undefined){
let data15 = data11.preset;
if(typeof data15 === "string"){
if(!pattern21.test(data15)){
const err34 = {instancePath:instancePath+"/features/preset",schemaPath:"#/$defs/features/properties/preset/pattern",keyword:"pattern",params:{pattern: "^[a-z0-9][a-z0-9._-]{0,63}$"},message:"must match pattern \""+"^[a-z0-9][a-z0-9._-]{0,63}$"+"\"",schema:"^[a-z0-9][a-z0-9._-]{0,63}$",parentSchema:schema45.properties.preset,data:data15};
if(vErrors === null){
vErrors = [err34];
}
else {
vErrors.push(err34);
}
errors++;
}
}
else {
const err35 = {instancePath:instancePath+"/features/preset",schemaPath:"#/$defs/features/properties/preset/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema45.properties.preset.type,parentSchema:schema45.properties.preset,data:data15};
if(vErrors === null){
vErrors = [err35];
}
else {
vErrors.push(err35);
}
errors++;
}
}
}
else {
const err36 = {instancePath:instancePath+"/features",schemaPath:"#/$defs/features/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema45.type,parentSchema:schema45,data:data11};
if(vErrors === null){
vErrors = [err36];
}
else {
vErrors.push(err36);
}
errors++;
}
}
if(data.exposure !== undefined){
let data16 = data.exposure;
if(data16 && typeof data16 == "object" && !Array.isArray(data16)){
for(const key3 in data16){
if(!(((key3 === "publicSsh") || (key3 === "publicPorts")) || (key3 === "otherListeners"))){
const err37 = {instancePath:instancePath+"/exposure",schemaPath:"#/$defs/exposure/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key3},message:"must NOT have additional properties",schema:false,parentSchema:schema46,data:data16};
if(vErrors === null){
vErrors = [err37];
}
else {
vErrors.push(err37);
}
errors++;
}
}
if(data16.publicSsh !== undefined){
let data17 = data16.publicSsh;
if(typeof data17 !== "boolean"){
const err38 = {instancePath:instancePath+"/exposure/publicSsh",schemaPath:"#/$defs/exposure/properties/publicSsh/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema46.properties.publicSsh.type,parentSchema:schema46.properties.publicSsh,data:data17};
if(vErrors === null){
vErrors = [err38];
}
else {
vErrors.push(err38);
}
errors++;
}
}
if(data16.publicPorts !== undefined){
let data18 = data16.publicPorts;
if(Array.isArray(data18)){
const len1 = data18.length;
for(let i2=0; i2<len1; i2++){
let data19 = data18[i2];
if(data19 && typeof data19 == "object" && !Array.isArray(data19)){
if(data19.protocol === undefined){
const err39 = {instancePath:instancePath+"/exposure/publicPorts/" + i2,schemaPath:"#/$defs/exposure/properties/publicPorts/items/required",keyword:"required",params:{missingProperty: "protocol"},message:"must have required property '"+"protocol"+"'",schema:schema46.properties.publicPorts.items.required,parentSchema:schema46.properties.publicPorts.items,data:data19};
if(vErrors === null){
vErrors = [err39];
}
else {
vErrors.push(err39);
}
errors++;
}
if(data19.port === undefined){
const err40 = {instancePath:instancePath+"/exposure/publicPorts/" + i2,schemaPath:"#/$defs/exposure/properties/publicPorts/items/required",keyword:"required",params:{missingProperty: "port"},message:"must have required property '"+"port"+"'",schema:schema46.properties.publicPorts.items.required,parentSchema:schema46.properties.publicPorts.items,data:data19};
if(vErrors === null){
vErrors = [err40];
}
else {
vErrors.push(err40);
}
errors++;
}
for(const key4 in data19){
if(!((key4 === "protocol") || (key4 === "port"))){
const err41 = {instancePath:instancePath+"/exposure/publicPorts/" + i2,schemaPath:"#/$defs/exposure/properties/publicPorts/items/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key4},message:"must NOT have additional properties",schema:false,parentSchema:schema46.properties.publicPorts.items,data:data19};
if(vErrors === null){
vErrors = [err41];
}
else {
vErrors.push(err41);
}
errors++;
}
}
if(data19.protocol !== undefined){
let data20 = data19.protocol;
if(!((data20 === "tcp") || (data20 === "udp"))){
const err42 = {instancePath:instancePath+"/exposure/publicPorts/" + i2+"/protocol",schemaPath:"#/$defs/exposure/properties/publicPorts/items/properties/protocol/enum",keyword:"enum",params:{allowedValues: schema46.properties.publicPorts.items.properties.protocol.enum},message:"must be equal to one of the allowed values",schema:schema46.properties.publicPorts.items.properties.protocol.enum,parentSchema:schema46.properties.publicPorts.items.properties.protocol,data:data20};
if(vErrors === null){
vErrors = [err42];
}
else {
vErrors.push(err42);
}
errors++;
}
}
if(data19.port !== undefined){
let data21 = data19.port;
if(!(((typeof data21 == "number") && (!(data21 % 1) && !isNaN(data21))) && (isFinite(data21)))){
const err43 = {instancePath:instancePath+"/exposure/publicPorts/" + i2+"/port",schemaPath:"#/$defs/exposure/properties/publicPorts/items/properties/port/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema46.properties.publicPorts.items.properties.port.type,parentSchema:schema46.properties.publicPorts.items.properties.port,data:data21};
if(vErrors === null){
vErrors = [err43];
}
else {
vErrors.push(err43);
}
errors++;
}
if((typeof data21 == "number") && (isFinite(data21))){
if(data21 > 65535 || isNaN(data21)){
const err44 = {instancePath:instancePath+"/exposure/publicPorts/" + i2+"/port",schemaPath:"#/$defs/exposure/properties/publicPorts/items/properties/port/maximum",keyword:"maximum",params:{comparison: "<=", limit: 65535},message:"must be <= 65535",schema:65535,parentSchema:schema46.properties.publicPorts.items.properties.port,data:data21};
if(vErrors === null){
vErrors = [err44];
}
else {
vErrors.push(err44);
}
errors++;
}
if(data21 < 1 || isNaN(data21)){
const err45 = {instancePath:instancePath+"/exposure/publicPorts/" + i2+"/port",schemaPath:"#/$defs/exposure/properties/publicPorts/items/properties/port/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1",schema:1,parentSchema:schema46.properties.publicPorts.items.properties.port,data:data21};
if(vErrors === null){
vErrors = [err45];
}
else {
vErrors.push(err45);
}
errors++;
}
}
}
}
else {
const err46 = {instancePath:instancePath+"/exposure/publicPorts/" + i2,schemaPath:"#/$defs/exposure/properties/publicPorts/items/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema46.properties.publicPorts.items.type,parentSchema:schema46.properties.publicPorts.items,data:data19};
if(vErrors === null){
vErrors = [err46];
}
else {
vErrors.push(err46);
}
errors++;
}
}
let i3 = data18.length;
let j1;
if(i3 > 1){
outer0:
for(;i3--;){
for(j1 = i3; j1--;){
if(func0(data18[i3], data18[j1])){
const err47 = {instancePath:instancePath+"/exposure/publicPorts",schemaPath:"#/$defs/exposure/properties/publicPorts/uniqueItems",keyword:"uniqueItems",params:{i: i3, j: j1},message:"must NOT have duplicate items (items ## "+j1+" and "+i3+" are identical)",schema:true,parentSchema:schema46.properties.publicPorts,data:data18};
if(vErrors === null){
vErrors = [err47];
}
else {
vErrors.push(err47);
}
errors++;
break outer0;
}
}
}
}
}
else {
const err48 = {instancePath:instancePath+"/exposure/publicPorts",schemaPath:"#/$defs/exposure/properties/publicPorts/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema46.properties.publicPorts.type,parentSchema:schema46.properties.publicPorts,data:data18};
if(vErrors === null){
vErrors = [err48];
}
else {
vErrors.push(err48);
}
errors++;
}
}
if(data16.otherListeners !== undefined){
let data22 = data16.otherListeners;
if(!((data22 === "warn") || (data22 === "fail"))){
const err49 = {instancePath:instancePath+"/exposure/otherListeners",schemaPath:"#/$defs/exposure/properties/otherListeners/enum",keyword:"enum",params:{allowedValues: schema46.properties.otherListeners.enum},message:"must be equal to one of the allowed values",schema:schema46.properties.otherListeners.enum,parentSchema:schema46.properties.otherListeners,data:data22};
if(vErrors === null){
vErrors = [err49];
}
else {
vErrors.push(err49);
}
errors++;
}
}
}
else {
const err50 = {instancePath:instancePath+"/exposure",schemaPath:"#/$defs/exposure/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema46.type,parentSchema:schema46,data:data16};
if(vErrors === null){
vErrors = [err50];
}
else {
vErrors.push(err50);
}
errors++;
}
}
if(data.dockerNetworkPolicy !== undefined){
let data23 = data.dockerNetworkPolicy;
if(data23 && typeof data23 == "object" && !Array.isArray(data23)){
if(data23.base === undefined){
const err51 = {instancePath:instancePath+"/dockerNetworkPolicy",schemaPath:"#/$defs/dockerNetworkPolicy/required",keyword:"required",params:{missingProperty: "base"},message:"must have required property '"+"base"+"'",schema:schema47.required,parentSchema:schema47,data:data23};
if(vErrors === null){
vErrors = [err51];
}
else {
vErrors.push(err51);
}
errors++;
}
if(data23.prefix === undefined){
const err52 = {instancePath:instancePath+"/dockerNetworkPolicy",schemaPath:"#/$defs/dockerNetworkPolicy/required",keyword:"required",params:{missingProperty: "prefix"},message:"must have required property '"+"prefix"+"'",schema:schema47.required,parentSchema:schema47,data:data23};
if(vErrors === null){
vErrors = [err52];
}
else {
vErrors.push(err52);
}
errors++;
}
if(data23.maxRunners === undefined){
const err53 = {instancePath:instancePath+"/dockerNetworkPolicy",schemaPath:"#/$defs/dockerNetworkPolicy/required",keyword:"required",params:{missingProperty: "maxRunners"},message:"must have required property '"+"maxRunners"+"'",schema:schema47.required,parentSchema:schema47,data:data23};
if(vErrors === null){
vErrors = [err53];
}
else {
vErrors.push(err53);
}
errors++;
}
if(data23.networksPerRunner === undefined){
const err54 = {instancePath:instancePath+"/dockerNetworkPolicy",schemaPath:"#/$defs/dockerNetworkPolicy/required",keyword:"required",params:{missingProperty: "networksPerRunner"},message:"must have required property '"+"networksPerRunner"+"'",schema:schema47.required,parentSchema:schema47,data:data23};
if(vErrors === null){
vErrors = [err54];
}
else {
vErrors.push(err54);
}
errors++;
}
if(data23.reserveSubnets === undefined){
const err55 = {instancePath:instancePath+"/dockerNetworkPolicy",schemaPath:"#/$defs/dockerNetworkPolicy/required",keyword:"required",params:{missingProperty: "reserveSubnets"},message:"must have required property '"+"reserveSubnets"+"'",schema:schema47.required,parentSchema:schema47,data:data23};
if(vErrors === null){
vErrors = [err55];
}
else {
vErrors.push(err55);
}
errors++;
}
for(const key5 in data23){
if(!((((((key5 === "base") || (key5 === "prefix")) || (key5 === "maxRunners")) || (key5 === "networksPerRunner")) || (key5 === "reserveSubnets")) || (key5 === "defaultBridgeCidr"))){
const err56 = {instancePath:instancePath+"/dockerNetworkPolicy",schemaPath:"#/$defs/dockerNetworkPolicy/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key5},message:"must NOT have additional properties",schema:false,parentSchema:schema47,data:data23};
if(vErrors === null){
vErrors = [err56];
}
else {
vErrors.push(err56);
}
errors++;
}
}
if(data23.base !== undefined){
let data24 = data23.base;
if(typeof data24 === "string"){
if(func2(data24) > 18){
const err57 = {instancePath:instancePath+"/dockerNetworkPolicy/base",schemaPath:"#/$defs/dockerNetworkPolicy/properties/base/maxLength",keyword:"maxLength",params:{limit: 18},message:"must NOT have more than 18 characters",schema:18,parentSchema:schema47.properties.base,data:data24};
if(vErrors === null){
vErrors = [err57];
}
else {
vErrors.push(err57);
}
errors++;
}
}
else {
const err58 = {instancePath:instancePath+"/dockerNetworkPolicy/base",schemaPath:"#/$defs/dockerNetworkPolicy/properties/base/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema47.properties.base.type,parentSchema:schema47.properties.base,data:data24};
if(vErrors === null){
vErrors = [err58];
}
else {
vErrors.push(err58);
}
errors++;
}
}
if(data23.prefix !== undefined){
let data25 = data23.prefix;
if(!(((typeof data25 == "number") && (!(data25 % 1) && !isNaN(data25))) && (isFinite(data25)))){
const err59 = {instancePath:instancePath+"/dockerNetworkPolicy/prefix",schemaPath:"#/$defs/dockerNetworkPolicy/properties/prefix/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema47.properties.prefix.type,parentSchema:schema47.properties.prefix,data:data25};
if(vErrors === null){
vErrors = [err59];
}
else {
vErrors.push(err59);
}
errors++;
}
if((typeof data25 == "number") && (isFinite(data25))){
if(data25 > 32 || isNaN(data25)){
const err60 = {instancePath:instancePath+"/dockerNetworkPolicy/prefix",schemaPath:"#/$defs/dockerNetworkPolicy/properties/prefix/maximum",keyword:"maximum",params:{comparison: "<=", limit: 32},message:"must be <= 32",schema:32,parentSchema:schema47.properties.prefix,data:data25};
if(vErrors === null){
vErrors = [err60];
}
else {
vErrors.push(err60);
}
errors++;
}
if(data25 < 0 || isNaN(data25)){
const err61 = {instancePath:instancePath+"/dockerNetworkPolicy/prefix",schemaPath:"#/$defs/dockerNetworkPolicy/properties/prefix/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0",schema:0,parentSchema:schema47.properties.prefix,data:data25};
if(vErrors === null){
vErrors = [err61];
}
else {
vErrors.push(err61);
}
errors++;
}
}
}
if(data23.maxRunners !== undefined){
let data26 = data23.maxRunners;
if(!(((typeof data26 == "number") && (!(data26 % 1) && !isNaN(data26))) && (isFinite(data26)))){
const err62 = {instancePath:instancePath+"/dockerNetworkPolicy/maxRunners",schemaPath:"#/$defs/dockerNetworkPolicy/properties/maxRunners/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema47.properties.maxRunners.type,parentSchema:schema47.properties.maxRunners,data:data26};
if(vErrors === null){
vErrors = [err62];
}
else {
vErrors.push(err62);
}
errors++;
}
if((typeof data26 == "number") && (isFinite(data26))){
if(data26 < 1 || isNaN(data26)){
const err63 = {instancePath:instancePath+"/dockerNetworkPolicy/maxRunners",schemaPath:"#/$defs/dockerNetworkPolicy/properties/maxRunners/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1",schema:1,parentSchema:schema47.properties.maxRunners,data:data26};
if(vErrors === null){
vErrors = [err63];
}
else {
vErrors.push(err63);
}
errors++;
}
}
}
if(data23.networksPerRunner !== undefined){
let data27 = data23.networksPerRunner;
if(!(((typeof data27 == "number") && (!(data27 % 1) && !isNaN(data27))) && (isFinite(data27)))){
const err64 = {instancePath:instancePath+"/dockerNetworkPolicy/networksPerRunner",schemaPath:"#/$defs/dockerNetworkPolicy/properties/networksPerRunner/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema47.properties.networksPerRunner.type,parentSchema:schema47.properties.networksPerRunner,data:data27};
if(vErrors === null){
vErrors = [err64];
}
else {
vErrors.push(err64);
}
errors++;
}
if((typeof data27 == "number") && (isFinite(data27))){
if(data27 < 1 || isNaN(data27)){
const err65 = {instancePath:instancePath+"/dockerNetworkPolicy/networksPerRunner",schemaPath:"#/$defs/dockerNetworkPolicy/properties/networksPerRunner/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1",schema:1,parentSchema:schema47.properties.networksPerRunner,data:data27};
if(vErrors === null){
vErrors = [err65];
}
else {
vErrors.push(err65);
}
errors++;
}
}
}
if(data23.reserveSubnets !== undefined){
let data28 = data23.reserveSubnets;
if(!(((typeof data28 == "number") && (!(data28 % 1) && !isNaN(data28))) && (isFinite(data28)))){
const err66 = {instancePath:instancePath+"/dockerNetworkPolicy/reserveSubnets",schemaPath:"#/$defs/dockerNetworkPolicy/properties/reserveSubnets/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema47.properties.reserveSubnets.type,parentSchema:schema47.properties.reserveSubnets,data:data28};
if(vErrors === null){
vErrors = [err66];
}
else {
vErrors.push(err66);
}
errors++;
}
if((typeof data28 == "number") && (isFinite(data28))){
if(data28 < 0 || isNaN(data28)){
const err67 = {instancePath:instancePath+"/dockerNetworkPolicy/reserveSubnets",schemaPath:"#/$defs/dockerNetworkPolicy/properties/reserveSubnets/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0",schema:0,parentSchema:schema47.properties.reserveSubnets,data:data28};
if(vErrors === null){
vErrors = [err67];
}
else {
vErrors.push(err67);
}
errors++;
}
}
}
if(data23.defaultBridgeCidr !== undefined){
let data29 = data23.defaultBridgeCidr;
if(typeof data29 === "string"){
if(func2(data29) > 18){
const err68 = {instancePath:instancePath+"/dockerNetworkPolicy/defaultBridgeCidr",schemaPath:"#/$defs/dockerNetworkPolicy/properties/defaultBridgeCidr/maxLength",keyword:"maxLength",params:{limit: 18},message:"must NOT have more than 18 characters",schema:18,parentSchema:schema47.properties.defaultBridgeCidr,data:data29};
if(vErrors === null){
vErrors = [err68];
}
else {
vErrors.push(err68);
}
errors++;
}
}
else {
const err69 = {instancePath:instancePath+"/dockerNetworkPolicy/defaultBridgeCidr",schemaPath:"#/$defs/dockerNetworkPolicy/properties/defaultBridgeCidr/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema47.properties.defaultBridgeCidr.type,parentSchema:schema47.properties.defaultBridgeCidr,data:data29};
if(vErrors === null){
vErrors = [err69];
}
else {
vErrors.push(err69);
}
errors++;
}
}
}
else {
const err70 = {instancePath:instancePath+"/dockerNetworkPolicy",schemaPath:"#/$defs/dockerNetworkPolicy/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema47.type,parentSchema:schema47,data:data23};
if(vErrors === null){
vErrors = [err70];
}
else {
vErrors.push(err70);
}
errors++;
}
}
}
else {
const err71 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema42.type,parentSchema:schema42,data};
if(vErrors === null){
vErrors = [err71];
}
else {
vErrors.push(err71);
}
errors++;
}
validate21.errors = vErrors;
return errors === 0;
}
validate21.evaluated = {"props":true,"dynamicProps":false,"dynamicItems":false};

const schema48 = {"type":"object","additionalProperties":false,"required":["id","pool","state"],"properties":{"id":{"$ref":"#/$defs/nodeId"},"pool":{"$ref":"#/$defs/dnsLabel"},"state":{"enum":["active","drained","disabled"]},"ssh":{"type":"object","additionalProperties":false,"required":["user"],"properties":{"host":{"description":"Host name, tailnet name or IP address. Optional for a node in a pool with a provider (providers.hetzner declared and the pool names its image): its address is the server fleetkit provisioned, recorded in the state; required for any other node (NODE_SSH_HOST_MISSING).","$comment":"grammar:sshHost (src/definition/grammar.ts)","type":"string","pattern":"^(?=.{1,253}$)((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)$"},"user":{"$comment":"grammar:posixUser (src/definition/grammar.ts)","type":"string","pattern":"^[a-z_][a-z0-9_-]{0,31}$"},"port":{"type":"integer","minimum":1,"maximum":65535}}},"hostKey":{"description":"Pinned SSH host public key.","$ref":"#/$defs/sshPublicKey"},"agentVersion":{"description":"This node's own agent version, ahead of release.version: the canary proves a new version before the fleet takes it.","$ref":"#/$defs/version"},"container":{"description":"The host is a container (systemd-nspawn, LXC, ...): it shares its host's kernel. Preflight accepts it (and refuses a VM or bare metal that declares it); the kernel parts, br_netfilter and the bridge sysctls, are reported not applicable.","type":"boolean"},"features":{"$ref":"#/$defs/features"},"exposure":{"$ref":"#/$defs/exposure"},"dataVolume":{"type":"object","additionalProperties":false,"required":["device","filesystem","mountPoint"],"properties":{"device":{"description":"A block device (/dev/...) or a provider volume name.","$comment":"grammar:device (src/definition/grammar.ts)","type":"string","pattern":"^(/dev/(?!(?:.*/)?\\.\\.(?:/|$))[A-Za-z0-9/_.-]{1,250}|[a-z0-9][a-z0-9-]{0,62})$"},"filesystem":{"const":"xfs"},"mountPoint":{"$comment":"grammar:mountPoint (src/definition/grammar.ts)","type":"string","pattern":"^/(?!(?:.*/)?\\.\\.(?:/|$))[A-Za-z0-9._/-]{0,254}$"}}},"maxCapacity":{"$ref":"#/$defs/capacity"},"region":{"$comment":"grammar:providerName (src/definition/grammar.ts)","type":"string","pattern":"^[a-z0-9][a-z0-9-]{0,31}$"},"serverType":{"$comment":"grammar:providerName (src/definition/grammar.ts)","type":"string","pattern":"^[a-z0-9][a-z0-9-]{0,31}$"}}};
const pattern26 = new RegExp("^(?=.{1,253}$)((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)$", "u");
const pattern27 = new RegExp("^[a-z_][a-z0-9_-]{0,31}$", "u");
const pattern31 = new RegExp("^(/dev/(?!(?:.*/)?\\.\\.(?:/|$))[A-Za-z0-9/_.-]{1,250}|[a-z0-9][a-z0-9-]{0,62})$", "u");
const pattern32 = new RegExp("^/(?!(?:.*/)?\\.\\.(?:/|$))[A-Za-z0-9._/-]{0,254}$", "u");

function validate23(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
let vErrors = null;
let errors = 0;
const evaluated0 = validate23.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if(data && typeof data == "object" && !Array.isArray(data)){
if(data.id === undefined){
const err0 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "id"},message:"must have required property '"+"id"+"'",schema:schema48.required,parentSchema:schema48,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
if(data.pool === undefined){
const err1 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "pool"},message:"must have required property '"+"pool"+"'",schema:schema48.required,parentSchema:schema48,data};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
if(data.state === undefined){
const err2 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "state"},message:"must have required property '"+"state"+"'",schema:schema48.required,parentSchema:schema48,data};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
for(const key0 in data){
if(!(func1.call(schema48.properties, key0))){
const err3 = {instancePath,schemaPath:"#/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties",schema:false,parentSchema:schema48,data};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
}
if(data.id !== undefined){
let data0 = data.id;
if(typeof data0 === "string"){
if(!pattern24.test(data0)){
const err4 = {instancePath:instancePath+"/id",schemaPath:"#/$defs/nodeId/pattern",keyword:"pattern",params:{pattern: "^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$"},message:"must match pattern \""+"^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$"+"\"",schema:"^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$",parentSchema:schema49,data:data0};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
}
else {
const err5 = {instancePath:instancePath+"/id",schemaPath:"#/$defs/nodeId/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema49.type,parentSchema:schema49,data:data0};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
}
if(data.pool !== undefined){
let data1 = data.pool;
if(typeof data1 === "string"){
if(!pattern4.test(data1)){
const err6 = {instancePath:instancePath+"/pool",schemaPath:"#/$defs/dnsLabel/pattern",keyword:"pattern",params:{pattern: "^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"},message:"must match pattern \""+"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"+"\"",schema:"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$",parentSchema:schema32,data:data1};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
}
else {
const err7 = {instancePath:instancePath+"/pool",schemaPath:"#/$defs/dnsLabel/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema32.type,parentSchema:schema32,data:data1};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
}
}
if(data.state !== undefined){
let data2 = data.state;
if(!(((data2 === "active") || (data2 === "drained")) || (data2 === "disabled"))){
const err8 = {instancePath:instancePath+"/state",schemaPath:"#/properties/state/enum",keyword:"enum",params:{allowedValues: schema48.properties.state.enum},message:"must be equal to one of the allowed values",schema:schema48.properties.state.enum,parentSchema:schema48.properties.state,data:data2};
if(vErrors === null){
vErrors = [err8];
}
else {
vErrors.push(err8);
}
errors++;
}
}
if(data.ssh !== undefined){
let data3 = data.ssh;
if(data3 && typeof data3 == "object" && !Array.isArray(data3)){
if(data3.user === undefined){
const err9 = {instancePath:instancePath+"/ssh",schemaPath:"#/properties/ssh/required",keyword:"required",params:{missingProperty: "user"},message:"must have required property '"+"user"+"'",schema:schema48.properties.ssh.required,parentSchema:schema48.properties.ssh,data:data3};
if(vErrors === null){
vErrors = [err9];
}
else {
vErrors.push(err9);
}
errors++;
}
for(const key1 in data3){
if(!(((key1 === "host") || (key1 === "user")) || (key1 === "port"))){
const err10 = {instancePath:instancePath+"/ssh",schemaPath:"#/properties/ssh/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key1},message:"must NOT have additional properties",schema:false,parentSchema:schema48.properties.ssh,data:data3};
if(vErrors === null){
vErrors = [err10];
}
else {
vErrors.push(err10);
}
errors++;
}
}
if(data3.host !== undefined){
let data4 = data3.host;
if(typeof data4 === "string"){
if(!pattern26.test(data4)){
const err11 = {instancePath:instancePath+"/ssh/host",schemaPath:"#/properties/ssh/properties/host/pattern",keyword:"pattern",params:{pattern: "^(?=.{1,253}$)((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)$"},message:"must match pattern \""+"^(?=.{1,253}$)((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)$"+"\"",schema:"^(?=.{1,253}$)((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)$",parentSchema:schema48.properties.ssh.properties.host,data:data4};
if(vErrors === null){
vErrors = [err11];
}
else {
vErrors.push(err11);
}
errors++;
}
}
else {
const err12 = {instancePath:instancePath+"/ssh/host",schemaPath:"#/properties/ssh/properties/host/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema48.properties.ssh.properties.host.type,parentSchema:schema48.properties.ssh.properties.host,data:data4};
if(vErrors === null){
vErrors = [err12];
}
else {
vErrors.push(err12);
}
errors++;
}
}
if(data3.user !== undefined){
let data5 = data3.user;
if(typeof data5 === "string"){
if(!pattern27.test(data5)){
const err13 = {instancePath:instancePath+"/ssh/user",schemaPath:"#/properties/ssh/properties/user/pattern",keyword:"pattern",params:{pattern: "^[a-z_][a-z0-9_-]{0,31}$"},message:"must match pattern \""+"^[a-z_][a-z0-9_-]{0,31}$"+"\"",schema:"^[a-z_][a-z0-9_-]{0,31}$",parentSchema:schema48.properties.ssh.properties.user,data:data5};
if(vErrors === null){
vErrors = [err13];
}
else {
vErrors.push(err13);
}
errors++;
}
}
else {
const err14 = {instancePath:instancePath+"/ssh/user",schemaPath:"#/properties/ssh/properties/user/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema48.properties.ssh.properties.user.type,parentSchema:schema48.properties.ssh.properties.user,data:data5};
if(vErrors === null){
vErrors = [err14];
}
else {
vErrors.push(err14);
}
errors++;
}
}
if(data3.port !== undefined){
let data6 = data3.port;
if(!(((typeof data6 == "number") && (!(data6 % 1) && !isNaN(data6))) && (isFinite(data6)))){
const err15 = {instancePath:instancePath+"/ssh/port",schemaPath:"#/properties/ssh/properties/port/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema48.properties.ssh.properties.port.type,parentSchema:schema48.properties.ssh.properties.port,data:data6};
if(vErrors === null){
vErrors = [err15];
}
else {
vErrors.push(err15);
}
errors++;
}
if((typeof data6 == "number") && (isFinite(data6))){
if(data6 > 65535 || isNaN(data6)){
const err16 = {instancePath:instancePath+"/ssh/port",schemaPath:"#/properties/ssh/properties/port/maximum",keyword:"maximum",params:{comparison: "<=", limit: 65535},message:"must be <= 65535",schema:65535,parentSchema:schema48.properties.ssh.properties.port,data:data6};
if(vErrors === null){
vErrors = [err16];
}
else {
vErrors.push(err16);
}
errors++;
}
if(data6 < 1 || isNaN(data6)){
const err17 = {instancePath:instancePath+"/ssh/port",schemaPath:"#/properties/ssh/properties/port/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1",schema:1,parentSchema:schema48.properties.ssh.properties.port,data:data6};
if(vErrors === null){
vErrors = [err17];
}
else {
vErrors.push(err17);
}
errors++;
}
}
}
}
else {
const err18 = {instancePath:instancePath+"/ssh",schemaPath:"#/properties/ssh/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema48.properties.ssh.type,parentSchema:schema48.properties.ssh,data:data3};
if(vErrors === null){
vErrors = [err18];
}
else {
vErrors.push(err18);
}
errors++;
}
}
if(data.hostKey !== undefined){
let data7 = data.hostKey;
if(typeof data7 === "string"){
if(func2(data7) > 16384){
const err19 = {instancePath:instancePath+"/hostKey",schemaPath:"#/$defs/sshPublicKey/maxLength",keyword:"maxLength",params:{limit: 16384},message:"must NOT have more than 16384 characters",schema:16384,parentSchema:schema40,data:data7};
if(vErrors === null){
vErrors = [err19];
}
else {
vErrors.push(err19);
}
errors++;
}
if(!pattern14.test(data7)){
const err20 = {instancePath:instancePath+"/hostKey",schemaPath:"#/$defs/sshPublicKey/pattern",keyword:"pattern",params:{pattern: "^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp256|ecdsa-sha2-nistp384|ecdsa-sha2-nistp521|sk-ssh-ed25519@openssh\\.com|sk-ecdsa-sha2-nistp256@openssh\\.com) [A-Za-z0-9+/]+={0,2}( [A-Za-z0-9@._+-]{1,100})?$"},message:"must match pattern \""+"^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp256|ecdsa-sha2-nistp384|ecdsa-sha2-nistp521|sk-ssh-ed25519@openssh\\.com|sk-ecdsa-sha2-nistp256@openssh\\.com) [A-Za-z0-9+/]+={0,2}( [A-Za-z0-9@._+-]{1,100})?$"+"\"",schema:"^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp256|ecdsa-sha2-nistp384|ecdsa-sha2-nistp521|sk-ssh-ed25519@openssh\\.com|sk-ecdsa-sha2-nistp256@openssh\\.com) [A-Za-z0-9+/]+={0,2}( [A-Za-z0-9@._+-]{1,100})?$",parentSchema:schema40,data:data7};
if(vErrors === null){
vErrors = [err20];
}
else {
vErrors.push(err20);
}
errors++;
}
}
else {
const err21 = {instancePath:instancePath+"/hostKey",schemaPath:"#/$defs/sshPublicKey/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema40.type,parentSchema:schema40,data:data7};
if(vErrors === null){
vErrors = [err21];
}
else {
vErrors.push(err21);
}
errors++;
}
}
if(data.agentVersion !== undefined){
let data8 = data.agentVersion;
if(typeof data8 === "string"){
if(func2(data8) > 64){
const err22 = {instancePath:instancePath+"/agentVersion",schemaPath:"#/$defs/version/maxLength",keyword:"maxLength",params:{limit: 64},message:"must NOT have more than 64 characters",schema:64,parentSchema:schema38,data:data8};
if(vErrors === null){
vErrors = [err22];
}
else {
vErrors.push(err22);
}
errors++;
}
if(!pattern11.test(data8)){
const err23 = {instancePath:instancePath+"/agentVersion",schemaPath:"#/$defs/version/pattern",keyword:"pattern",params:{pattern: "^[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z][0-9A-Za-z.-]*)?$"},message:"must match pattern \""+"^[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z][0-9A-Za-z.-]*)?$"+"\"",schema:"^[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z][0-9A-Za-z.-]*)?$",parentSchema:schema38,data:data8};
if(vErrors === null){
vErrors = [err23];
}
else {
vErrors.push(err23);
}
errors++;
}
}
else {
const err24 = {instancePath:instancePath+"/agentVersion",schemaPath:"#/$defs/version/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema38.type,parentSchema:schema38,data:data8};
if(vErrors === null){
vErrors = [err24];
}
else {
vErrors.push(err24);
}
errors++;
}
}
if(data.container !== undefined){
let data9 = data.container;
if(typeof data9 !== "boolean"){
const err25 = {instancePath:instancePath+"/container",schemaPath:"#/properties/container/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema48.properties.container.type,parentSchema:schema48.properties.container,data:data9};
if(vErrors === null){
vErrors = [err25];
}
else {
vErrors.push(err25);
}
errors++;
}
}
if(data.features !== undefined){
let data10 = data.features;
if(data10 && typeof data10 == "object" && !Array.isArray(data10)){
for(const key2 in data10){
if(!((((key2 === "containers") || (key2 === "tailscale")) || (key2 === "session")) || (key2 === "preset"))){
const err26 = {instancePath:instancePath+"/features",schemaPath:"#/$defs/features/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key2},message:"must NOT have additional properties",schema:false,parentSchema:schema45,data:data10};
if(vErrors === null){
vErrors = [err26];
}
else {
vErrors.push(err26);
}
errors++;
}
}
if(data10.containers !== undefined){
let data11 = data10.containers;
if(typeof data11 !== "boolean"){
const err27 = {instancePath:instancePath+"/features/containers",schemaPath:"#/$defs/features/properties/containers/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema45.properties.containers.type,parentSchema:schema45.properties.containers,data:data11};
if(vErrors === null){
vErrors = [err27];
}
else {
vErrors.push(err27);
}
errors++;
}
}
if(data10.tailscale !== undefined){
let data12 = data10.tailscale;
if(typeof data12 !== "boolean"){
const err28 = {instancePath:instancePath+"/features/tailscale",schemaPath:"#/$defs/features/properties/tailscale/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema45.properties.tailscale.type,parentSchema:schema45.properties.tailscale,data:data12};
if(vErrors === null){
vErrors = [err28];
}
else {
vErrors.push(err28);
}
errors++;
}
}
if(data10.session !== undefined){
let data13 = data10.session;
if(!(data13 === "headless")){
const err29 = {instancePath:instancePath+"/features/session",schemaPath:"#/$defs/features/properties/session/enum",keyword:"enum",params:{allowedValues: schema45.properties.session.enum},message:"must be equal to one of the allowed values",schema:schema45.properties.session.enum,parentSchema:schema45.properties.session,data:data13};
if(vErrors === null){
vErrors = [err29];
}
else {
vErrors.push(err29);
}
errors++;
}
}
if(data10.preset !== undefined){
let data14 = data10.preset;
if(typeof data14 === "string"){
if(!pattern21.test(data14)){
const err30 = {instancePath:instancePath+"/features/preset",schemaPath:"#/$defs/features/properties/preset/pattern",keyword:"pattern",params:{pattern: "^[a-z0-9][a-z0-9._-]{0,63}$"},message:"must match pattern \""+"^[a-z0-9][a-z0-9._-]{0,63}$"+"\"",schema:"^[a-z0-9][a-z0-9._-]{0,63}$",parentSchema:schema45.properties.preset,data:data14};
if(vErrors === null){
vErrors = [err30];
}
else {
vErrors.push(err30);
}
errors++;
}
}
else {
const err31 = {instancePath:instancePath+"/features/preset",schemaPath:"#/$defs/features/properties/preset/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema45.properties.preset.type,parentSchema:schema45.properties.preset,data:data14};
if(vErrors === null){
vErrors = [err31];
}
else {
vErrors.push(err31);
}
errors++;
}
}
}
else {
const err32 = {instancePath:instancePath+"/features",schemaPath:"#/$defs/features/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema45.type,parentSchema:schema45,data:data10};
if(vErrors === null){
vErrors = [err32];
}
else {
vErrors.push(err32);
}
errors++;
}
}
if(data.exposure !== undefined){
let data15 = data.exposure;
if(data15 && typeof data15 == "object" && !Array.isArray(data15)){
for(const key3 in data15){
if(!(((key3 === "publicSsh") || (key3 === "publicPorts")) || (key3 === "otherListeners"))){
const err33 = {instancePath:instancePath+"/exposure",schemaPath:"#/$defs/exposure/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key3},message:"must NOT have additional properties",schema:false,parentSchema:schema46,data:data15};
if(vErrors === null){
vErrors = [err33];
}
else {
vErrors.push(err33);
}
errors++;
}
}
if(data15.publicSsh !== undefined){
let data16 = data15.publicSsh;
if(typeof data16 !== "boolean"){
const err34 = {instancePath:instancePath+"/exposure/publicSsh",schemaPath:"#/$defs/exposure/properties/publicSsh/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema46.properties.publicSsh.type,parentSchema:schema46.properties.publicSsh,data:data16};
if(vErrors === null){
vErrors = [err34];
}
else {
vErrors.push(err34);
}
errors++;
}
}
if(data15.publicPorts !== undefined){
let data17 = data15.publicPorts;
if(Array.isArray(data17)){
const len0 = data17.length;
for(let i0=0; i0<len0; i0++){
let data18 = data17[i0];
if(data18 && typeof data18 == "object" && !Array.isArray(data18)){
if(data18.protocol === undefined){
const err35 = {instancePath:instancePath+"/exposure/publicPorts/" + i0,schemaPath:"#/$defs/exposure/properties/publicPorts/items/required",keyword:"required",params:{missingProperty: "protocol"},message:"must have required property '"+"protocol"+"'",schema:schema46.properties.publicPorts.items.required,parentSchema:schema46.properties.publicPorts.items,data:data18};
if(vErrors === null){
vErrors = [err35];
}
else {
vErrors.push(err35);
}
errors++;
}
if(data18.port === undefined){
const err36 = {instancePath:instancePath+"/exposure/publicPorts/" + i0,schemaPath:"#/$defs/exposure/properties/publicPorts/items/required",keyword:"required",params:{missingProperty: "port"},message:"must have required property '"+"port"+"'",schema:schema46.properties.publicPorts.items.required,parentSchema:schema46.properties.publicPorts.items,data:data18};
if(vErrors === null){
vErrors = [err36];
}
else {
vErrors.push(err36);
}
errors++;
}
for(const key4 in data18){
if(!((key4 === "protocol") || (key4 === "port"))){
const err37 = {instancePath:instancePath+"/exposure/publicPorts/" + i0,schemaPath:"#/$defs/exposure/properties/publicPorts/items/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key4},message:"must NOT have additional properties",schema:false,parentSchema:schema46.properties.publicPorts.items,data:data18};
if(vErrors === null){
vErrors = [err37];
}
else {
vErrors.push(err37);
}
errors++;
}
}
if(data18.protocol !== undefined){
let data19 = data18.protocol;
if(!((data19 === "tcp") || (data19 === "udp"))){
const err38 = {instancePath:instancePath+"/exposure/publicPorts/" + i0+"/protocol",schemaPath:"#/$defs/exposure/properties/publicPorts/items/properties/protocol/enum",keyword:"enum",params:{allowedValues: schema46.properties.publicPorts.items.properties.protocol.enum},message:"must be equal to one of the allowed values",schema:schema46.properties.publicPorts.items.properties.protocol.enum,parentSchema:schema46.properties.publicPorts.items.properties.protocol,data:data19};
if(vErrors === null){
vErrors = [err38];
}
else {
vErrors.push(err38);
}
errors++;
}
}
if(data18.port !== undefined){
let data20 = data18.port;
if(!(((typeof data20 == "number") && (!(data20 % 1) && !isNaN(data20))) && (isFinite(data20)))){
const err39 = {instancePath:instancePath+"/exposure/publicPorts/" + i0+"/port",schemaPath:"#/$defs/exposure/properties/publicPorts/items/properties/port/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema46.properties.publicPorts.items.properties.port.type,parentSchema:schema46.properties.publicPorts.items.properties.port,data:data20};
if(vErrors === null){
vErrors = [err39];
}
else {
vErrors.push(err39);
}
errors++;
}
if((typeof data20 == "number") && (isFinite(data20))){
if(data20 > 65535 || isNaN(data20)){
const err40 = {instancePath:instancePath+"/exposure/publicPorts/" + i0+"/port",schemaPath:"#/$defs/exposure/properties/publicPorts/items/properties/port/maximum",keyword:"maximum",params:{comparison: "<=", limit: 65535},message:"must be <= 65535",schema:65535,parentSchema:schema46.properties.publicPorts.items.properties.port,data:data20};
if(vErrors === null){
vErrors = [err40];
}
else {
vErrors.push(err40);
}
errors++;
}
if(data20 < 1 || isNaN(data20)){
const err41 = {instancePath:instancePath+"/exposure/publicPorts/" + i0+"/port",schemaPath:"#/$defs/exposure/properties/publicPorts/items/properties/port/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1",schema:1,parentSchema:schema46.properties.publicPorts.items.properties.port,data:data20};
if(vErrors === null){
vErrors = [err41];
}
else {
vErrors.push(err41);
}
errors++;
}
}
}
}
else {
const err42 = {instancePath:instancePath+"/exposure/publicPorts/" + i0,schemaPath:"#/$defs/exposure/properties/publicPorts/items/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema46.properties.publicPorts.items.type,parentSchema:schema46.properties.publicPorts.items,data:data18};
if(vErrors === null){
vErrors = [err42];
}
else {
vErrors.push(err42);
}
errors++;
}
}
let i1 = data17.length;
let j0;
if(i1 > 1){
outer0:
for(;i1--;){
for(j0 = i1; j0--;){
if(func0(data17[i1], data17[j0])){
const err43 = {instancePath:instancePath+"/exposure/publicPorts",schemaPath:"#/$defs/exposure/properties/publicPorts/uniqueItems",keyword:"uniqueItems",params:{i: i1, j: j0},message:"must NOT have duplicate items (items ## "+j0+" and "+i1+" are identical)",schema:true,parentSchema:schema46.properties.publicPorts,data:data17};
if(vErrors === null){
vErrors = [err43];
}
else {
vErrors.push(err43);
}
errors++;
break outer0;
}
}
}
}
}
else {
const err44 = {instancePath:instancePath+"/exposure/publicPorts",schemaPath:"#/$defs/exposure/properties/publicPorts/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema46.properties.publicPorts.type,parentSchema:schema46.properties.publicPorts,data:data17};
if(vErrors === null){
vErrors = [err44];
}
else {
vErrors.push(err44);
}
errors++;
}
}
if(data15.otherListeners !== undefined){
let data21 = data15.otherListeners;
if(!((data21 === "warn") || (data21 === "fail"))){
const err45 = {instancePath:instancePath+"/exposure/otherListeners",schemaPath:"#/$defs/exposure/properties/otherListeners/enum",keyword:"enum",params:{allowedValues: schema46.properties.otherListeners.enum},message:"must be equal to one of the allowed values",schema:schema46.properties.otherListeners.enum,parentSchema:schema46.properties.otherListeners,data:data21};
if(vErrors === null){
vErrors = [err45];
}
else {
vErrors.push(err45);
}
errors++;
}
}
}
else {
const err46 = {instancePath:instancePath+"/exposure",schemaPath:"#/$defs/exposure/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema46.type,parentSchema:schema46,data:data15};
if(vErrors === null){
vErrors = [err46];
}
else {
vErrors.push(err46);
}
errors++;
}
}
if(data.dataVolume !== undefined){
let data22 = data.dataVolume;
if(data22 && typeof data22 == "object" && !Array.isArray(data22)){
if(data22.device === undefined){
const err47 = {instancePath:instancePath+"/dataVolume",schemaPath:"#/properties/dataVolume/required",keyword:"required",params:{missingProperty: "device"},message:"must have required property '"+"device"+"'",schema:schema48.properties.dataVolume.required,parentSchema:schema48.properties.dataVolume,data:data22};
if(vErrors === null){
vErrors = [err47];
}
else {
vErrors.push(err47);
}
errors++;
}
if(data22.filesystem === undefined){
const err48 = {instancePath:instancePath+"/dataVolume",schemaPath:"#/properties/dataVolume/required",keyword:"required",params:{missingProperty: "filesystem"},message:"must have required property '"+"filesystem"+"'",schema:schema48.properties.dataVolume.required,parentSchema:schema48.properties.dataVolume,data:data22};
if(vErrors === null){
vErrors = [err48];
}
else {
vErrors.push(err48);
}
errors++;
}
if(data22.mountPoint === undefined){
const err49 = {instancePath:instancePath+"/dataVolume",schemaPath:"#/properties/dataVolume/required",keyword:"required",params:{missingProperty: "mountPoint"},message:"must have required property '"+"mountPoint"+"'",schema:schema48.properties.dataVolume.required,parentSchema:schema48.properties.dataVolume,data:data22};
if(vErrors === null){
vErrors = [err49];
}
else {
vErrors.push(err49);
}
errors++;
}
for(const key5 in data22){
if(!(((key5 === "device") || (key5 === "filesystem")) || (key5 === "mountPoint"))){
const err50 = {instancePath:instancePath+"/dataVolume",schemaPath:"#/properties/dataVolume/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key5},message:"must NOT have additional properties",schema:false,parentSchema:schema48.properties.dataVolume,data:data22};
if(vErrors === null){
vErrors = [err50];
}
else {
vErrors.push(err50);
}
errors++;
}
}
if(data22.device !== undefined){
let data23 = data22.device;
if(typeof data23 === "string"){
if(!pattern31.test(data23)){
const err51 = {instancePath:instancePath+"/dataVolume/device",schemaPath:"#/properties/dataVolume/properties/device/pattern",keyword:"pattern",params:{pattern: "^(/dev/(?!(?:.*/)?\\.\\.(?:/|$))[A-Za-z0-9/_.-]{1,250}|[a-z0-9][a-z0-9-]{0,62})$"},message:"must match pattern \""+"^(/dev/(?!(?:.*/)?\\.\\.(?:/|$))[A-Za-z0-9/_.-]{1,250}|[a-z0-9][a-z0-9-]{0,62})$"+"\"",schema:"^(/dev/(?!(?:.*/)?\\.\\.(?:/|$))[A-Za-z0-9/_.-]{1,250}|[a-z0-9][a-z0-9-]{0,62})$",parentSchema:schema48.properties.dataVolume.properties.device,data:data23};
if(vErrors === null){
vErrors = [err51];
}
else {
vErrors.push(err51);
}
errors++;
}
}
else {
const err52 = {instancePath:instancePath+"/dataVolume/device",schemaPath:"#/properties/dataVolume/properties/device/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema48.properties.dataVolume.properties.device.type,parentSchema:schema48.properties.dataVolume.properties.device,data:data23};
if(vErrors === null){
vErrors = [err52];
}
else {
vErrors.push(err52);
}
errors++;
}
}
if(data22.filesystem !== undefined){
let data24 = data22.filesystem;
if("xfs" !== data24){
const err53 = {instancePath:instancePath+"/dataVolume/filesystem",schemaPath:"#/properties/dataVolume/properties/filesystem/const",keyword:"const",params:{allowedValue: "xfs"},message:"must be equal to constant",schema:"xfs",parentSchema:schema48.properties.dataVolume.properties.filesystem,data:data24};
if(vErrors === null){
vErrors = [err53];
}
else {
vErrors.push(err53);
}
errors++;
}
}
if(data22.mountPoint !== undefined){
let data25 = data22.mountPoint;
if(typeof data25 === "string"){
if(!pattern32.test(data25)){
const err54 = {instancePath:instancePath+"/dataVolume/mountPoint",schemaPath:"#/properties/dataVolume/properties/mountPoint/pattern",keyword:"pattern",params:{pattern: "^/(?!(?:.*/)?\\.\\.(?:/|$))[A-Za-z0-9._/-]{0,254}$"},message:"must match pattern \""+"^/(?!(?:.*/)?\\.\\.(?:/|$))[A-Za-z0-9._/-]{0,254}$"+"\"",schema:"^/(?!(?:.*/)?\\.\\.(?:/|$))[A-Za-z0-9._/-]{0,254}$",parentSchema:schema48.properties.dataVolume.properties.mountPoint,data:data25};
if(vErrors === null){
vErrors = [err54];
}
else {
vErrors.push(err54);
}
errors++;
}
}
else {
const err55 = {instancePath:instancePath+"/dataVolume/mountPoint",schemaPath:"#/properties/dataVolume/properties/mountPoint/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema48.properties.dataVolume.properties.mountPoint.type,parentSchema:schema48.properties.dataVolume.properties.mountPoint,data:data25};
if(vErrors === null){
vErrors = [err55];
}
else {
vErrors.push(err55);
}
errors++;
}
}
}
else {
const err56 = {instancePath:instancePath+"/dataVolume",schemaPath:"#/properties/dataVolume/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema48.properties.dataVolume.type,parentSchema:schema48.properties.dataVolume,data:data22};
if(vErrors === null){
vErrors = [err56];
}
else {
vErrors.push(err56);
}
errors++;
}
}
if(data.maxCapacity !== undefined){
let data26 = data.maxCapacity;
if(data26 && typeof data26 == "object" && !Array.isArray(data26)){
if(data26.cpu === undefined){
const err57 = {instancePath:instancePath+"/maxCapacity",schemaPath:"#/$defs/capacity/required",keyword:"required",params:{missingProperty: "cpu"},message:"must have required property '"+"cpu"+"'",schema:schema44.required,parentSchema:schema44,data:data26};
if(vErrors === null){
vErrors = [err57];
}
else {
vErrors.push(err57);
}
errors++;
}
if(data26.memoryMiB === undefined){
const err58 = {instancePath:instancePath+"/maxCapacity",schemaPath:"#/$defs/capacity/required",keyword:"required",params:{missingProperty: "memoryMiB"},message:"must have required property '"+"memoryMiB"+"'",schema:schema44.required,parentSchema:schema44,data:data26};
if(vErrors === null){
vErrors = [err58];
}
else {
vErrors.push(err58);
}
errors++;
}
if(data26.diskGiB === undefined){
const err59 = {instancePath:instancePath+"/maxCapacity",schemaPath:"#/$defs/capacity/required",keyword:"required",params:{missingProperty: "diskGiB"},message:"must have required property '"+"diskGiB"+"'",schema:schema44.required,parentSchema:schema44,data:data26};
if(vErrors === null){
vErrors = [err59];
}
else {
vErrors.push(err59);
}
errors++;
}
for(const key6 in data26){
if(!(((key6 === "cpu") || (key6 === "memoryMiB")) || (key6 === "diskGiB"))){
const err60 = {instancePath:instancePath+"/maxCapacity",schemaPath:"#/$defs/capacity/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key6},message:"must NOT have additional properties",schema:false,parentSchema:schema44,data:data26};
if(vErrors === null){
vErrors = [err60];
}
else {
vErrors.push(err60);
}
errors++;
}
}
if(data26.cpu !== undefined){
let data27 = data26.cpu;
if((typeof data27 == "number") && (isFinite(data27))){
if(data27 > 999999 || isNaN(data27)){
const err61 = {instancePath:instancePath+"/maxCapacity/cpu",schemaPath:"#/$defs/capacity/properties/cpu/maximum",keyword:"maximum",params:{comparison: "<=", limit: 999999},message:"must be <= 999999",schema:999999,parentSchema:schema44.properties.cpu,data:data27};
if(vErrors === null){
vErrors = [err61];
}
else {
vErrors.push(err61);
}
errors++;
}
if(data27 <= 0 || isNaN(data27)){
const err62 = {instancePath:instancePath+"/maxCapacity/cpu",schemaPath:"#/$defs/capacity/properties/cpu/exclusiveMinimum",keyword:"exclusiveMinimum",params:{comparison: ">", limit: 0},message:"must be > 0",schema:0,parentSchema:schema44.properties.cpu,data:data27};
if(vErrors === null){
vErrors = [err62];
}
else {
vErrors.push(err62);
}
errors++;
}
}
else {
const err63 = {instancePath:instancePath+"/maxCapacity/cpu",schemaPath:"#/$defs/capacity/properties/cpu/type",keyword:"type",params:{type: "number"},message:"must be number",schema:schema44.properties.cpu.type,parentSchema:schema44.properties.cpu,data:data27};
if(vErrors === null){
vErrors = [err63];
}
else {
vErrors.push(err63);
}
errors++;
}
}
if(data26.memoryMiB !== undefined){
let data28 = data26.memoryMiB;
if(!(((typeof data28 == "number") && (!(data28 % 1) && !isNaN(data28))) && (isFinite(data28)))){
const err64 = {instancePath:instancePath+"/maxCapacity/memoryMiB",schemaPath:"#/$defs/capacity/properties/memoryMiB/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema44.properties.memoryMiB.type,parentSchema:schema44.properties.memoryMiB,data:data28};
if(vErrors === null){
vErrors = [err64];
}
else {
vErrors.push(err64);
}
errors++;
}
if((typeof data28 == "number") && (isFinite(data28))){
if(data28 > 2147483647 || isNaN(data28)){
const err65 = {instancePath:instancePath+"/maxCapacity/memoryMiB",schemaPath:"#/$defs/capacity/properties/memoryMiB/maximum",keyword:"maximum",params:{comparison: "<=", limit: 2147483647},message:"must be <= 2147483647",schema:2147483647,parentSchema:schema44.properties.memoryMiB,data:data28};
if(vErrors === null){
vErrors = [err65];
}
else {
vErrors.push(err65);
}
errors++;
}
if(data28 < 1 || isNaN(data28)){
const err66 = {instancePath:instancePath+"/maxCapacity/memoryMiB",schemaPath:"#/$defs/capacity/properties/memoryMiB/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1",schema:1,parentSchema:schema44.properties.memoryMiB,data:data28};
if(vErrors === null){
vErrors = [err66];
}
else {
vErrors.push(err66);
}
errors++;
}
}
}
if(data26.diskGiB !== undefined){
let data29 = data26.diskGiB;
if(!(((typeof data29 == "number") && (!(data29 % 1) && !isNaN(data29))) && (isFinite(data29)))){
const err67 = {instancePath:instancePath+"/maxCapacity/diskGiB",schemaPath:"#/$defs/capacity/properties/diskGiB/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema44.properties.diskGiB.type,parentSchema:schema44.properties.diskGiB,data:data29};
if(vErrors === null){
vErrors = [err67];
}
else {
vErrors.push(err67);
}
errors++;
}
if((typeof data29 == "number") && (isFinite(data29))){
if(data29 > 2147483647 || isNaN(data29)){
const err68 = {instancePath:instancePath+"/maxCapacity/diskGiB",schemaPath:"#/$defs/capacity/properties/diskGiB/maximum",keyword:"maximum",params:{comparison: "<=", limit: 2147483647},message:"must be <= 2147483647",schema:2147483647,parentSchema:schema44.properties.diskGiB,data:data29};
if(vErrors === null){
vErrors = [err68];
}
else {
vErrors.push(err68);
}
errors++;
}
if(data29 < 1 || isNaN(data29)){
const err69 = {instancePath:instancePath+"/maxCapacity/diskGiB",schemaPath:"#/$defs/capacity/properties/diskGiB/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1",schema:1,parentSchema:schema44.properties.diskGiB,data:data29};
if(vErrors === null){
vErrors = [err69];
}
else {
vErrors.push(err69);
}
errors++;
}
}
}
}
else {
const err70 = {instancePath:instancePath+"/maxCapacity",schemaPath:"#/$defs/capacity/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema44.type,parentSchema:schema44,data:data26};
if(vErrors === null){
vErrors = [err70];
}
else {
vErrors.push(err70);
}
errors++;
}
}
if(data.region !== undefined){
let data30 = data.region;
if(typeof data30 === "string"){
if(!pattern20.test(data30)){
const err71 = {instancePath:instancePath+"/region",schemaPath:"#/properties/region/pattern",keyword:"pattern",params:{pattern: "^[a-z0-9][a-z0-9-]{0,31}$"},message:"must match pattern \""+"^[a-z0-9][a-z0-9-]{0,31}$"+"\"",schema:"^[a-z0-9][a-z0-9-]{0,31}$",parentSchema:schema48.properties.region,data:data30};
if(vErrors === null){
vErrors = [err71];
}
else {
vErrors.push(err71);
}
errors++;
}
}
else {
const err72 = {instancePath:instancePath+"/region",schemaPath:"#/properties/region/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema48.properties.region.type,parentSchema:schema48.properties.region,data:data30};
if(vErrors === null){
vErrors = [err72];
}
else {
vErrors.push(err72);
}
errors++;
}
}
if(data.serverType !== undefined){
let data31 = data.serverType;
if(typeof data31 === "string"){
if(!pattern20.test(data31)){
const err73 = {instancePath:instancePath+"/serverType",schemaPath:"#/properties/serverType/pattern",keyword:"pattern",params:{pattern: "^[a-z0-9][a-z0-9-]{0,31}$"},message:"must match pattern \""+"^[a-z0-9][a-z0-9-]{0,31}$"+"\"",schema:"^[a-z0-9][a-z0-9-]{0,31}$",parentSchema:schema48.properties.serverType,data:data31};
if(vErrors === null){
vErrors = [err73];
}
else {
vErrors.push(err73);
}
errors++;
}
}
else {
const err74 = {instancePath:instancePath+"/serverType",schemaPath:"#/properties/serverType/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema48.properties.serverType.type,parentSchema:schema48.properties.serverType,data:data31};
if(vErrors === null){
vErrors = [err74];
}
else {
vErrors.push(err74);
}
errors++;
}
}
}
else {
const err75 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema48.type,parentSchema:schema48,data};
if(vErrors === null){
vErrors = [err75];
}
else {
vErrors.push(err75);
}
errors++;
}
validate23.errors = vErrors;
return errors === 0;
}
validate23.evaluated = {"props":true,"dynamicProps":false,"dynamicItems":false};


function validate20(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
/*# sourceURL="https://fleetkit.dev/schema/fleet.schema.json" */;
let vErrors = null;
let errors = 0;
const evaluated0 = validate20.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if(data && typeof data == "object" && !Array.isArray(data)){
if(data.version === undefined){
const err0 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "version"},message:"must have required property '"+"version"+"'",schema:schema31.required,parentSchema:schema31,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
if(data.fleet === undefined){
const err1 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "fleet"},message:"must have required property '"+"fleet"+"'",schema:schema31.required,parentSchema:schema31,data};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
if(data.gateway === undefined){
const err2 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "gateway"},message:"must have required property '"+"gateway"+"'",schema:schema31.required,parentSchema:schema31,data};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
if(data.release === undefined){
const err3 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "release"},message:"must have required property '"+"release"+"'",schema:schema31.required,parentSchema:schema31,data};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
if(data.operators === undefined){
const err4 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "operators"},message:"must have required property '"+"operators"+"'",schema:schema31.required,parentSchema:schema31,data};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
if(data.pools === undefined){
const err5 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "pools"},message:"must have required property '"+"pools"+"'",schema:schema31.required,parentSchema:schema31,data};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
for(const key0 in data){
if(!(func1.call(schema31.properties, key0))){
const err6 = {instancePath,schemaPath:"#/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties",schema:false,parentSchema:schema31,data};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
}
if(data.version !== undefined){
let data0 = data.version;
if(1 !== data0){
const err7 = {instancePath:instancePath+"/version",schemaPath:"#/properties/version/const",keyword:"const",params:{allowedValue: 1},message:"must be equal to constant",schema:1,parentSchema:schema31.properties.version,data:data0};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
}
}
if(data.fleet !== undefined){
let data1 = data.fleet;
if(typeof data1 === "string"){
if(!pattern4.test(data1)){
const err8 = {instancePath:instancePath+"/fleet",schemaPath:"#/$defs/dnsLabel/pattern",keyword:"pattern",params:{pattern: "^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"},message:"must match pattern \""+"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"+"\"",schema:"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$",parentSchema:schema32,data:data1};
if(vErrors === null){
vErrors = [err8];
}
else {
vErrors.push(err8);
}
errors++;
}
}
else {
const err9 = {instancePath:instancePath+"/fleet",schemaPath:"#/$defs/dnsLabel/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema32.type,parentSchema:schema32,data:data1};
if(vErrors === null){
vErrors = [err9];
}
else {
vErrors.push(err9);
}
errors++;
}
}
if(data.example !== undefined){
let data2 = data.example;
if(typeof data2 !== "boolean"){
const err10 = {instancePath:instancePath+"/example",schemaPath:"#/properties/example/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema31.properties.example.type,parentSchema:schema31.properties.example,data:data2};
if(vErrors === null){
vErrors = [err10];
}
else {
vErrors.push(err10);
}
errors++;
}
}
if(data.gateway !== undefined){
let data3 = data.gateway;
if(data3 && typeof data3 == "object" && !Array.isArray(data3)){
if(data3.url === undefined){
const err11 = {instancePath:instancePath+"/gateway",schemaPath:"#/properties/gateway/required",keyword:"required",params:{missingProperty: "url"},message:"must have required property '"+"url"+"'",schema:schema31.properties.gateway.required,parentSchema:schema31.properties.gateway,data:data3};
if(vErrors === null){
vErrors = [err11];
}
else {
vErrors.push(err11);
}
errors++;
}
if(data3.enrollUrl === undefined){
const err12 = {instancePath:instancePath+"/gateway",schemaPath:"#/properties/gateway/required",keyword:"required",params:{missingProperty: "enrollUrl"},message:"must have required property '"+"enrollUrl"+"'",schema:schema31.properties.gateway.required,parentSchema:schema31.properties.gateway,data:data3};
if(vErrors === null){
vErrors = [err12];
}
else {
vErrors.push(err12);
}
errors++;
}
for(const key1 in data3){
if(!(((key1 === "url") || (key1 === "enrollUrl")) || (key1 === "replicas"))){
const err13 = {instancePath:instancePath+"/gateway",schemaPath:"#/properties/gateway/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key1},message:"must NOT have additional properties",schema:false,parentSchema:schema31.properties.gateway,data:data3};
if(vErrors === null){
vErrors = [err13];
}
else {
vErrors.push(err13);
}
errors++;
}
}
if(data3.url !== undefined){
let data4 = data3.url;
if(typeof data4 === "string"){
if(func2(data4) > 2048){
const err14 = {instancePath:instancePath+"/gateway/url",schemaPath:"#/$defs/httpsUrl/maxLength",keyword:"maxLength",params:{limit: 2048},message:"must NOT have more than 2048 characters",schema:2048,parentSchema:schema33,data:data4};
if(vErrors === null){
vErrors = [err14];
}
else {
vErrors.push(err14);
}
errors++;
}
if(!pattern5.test(data4)){
const err15 = {instancePath:instancePath+"/gateway/url",schemaPath:"#/$defs/httpsUrl/pattern",keyword:"pattern",params:{pattern: "^(?!.*\\.\\.)https://[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?(?:/[A-Za-z0-9._~/-]*)?$"},message:"must match pattern \""+"^(?!.*\\.\\.)https://[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?(?:/[A-Za-z0-9._~/-]*)?$"+"\"",schema:"^(?!.*\\.\\.)https://[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?(?:/[A-Za-z0-9._~/-]*)?$",parentSchema:schema33,data:data4};
if(vErrors === null){
vErrors = [err15];
}
else {
vErrors.push(err15);
}
errors++;
}
}
else {
const err16 = {instancePath:instancePath+"/gateway/url",schemaPath:"#/$defs/httpsUrl/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema33.type,parentSchema:schema33,data:data4};
if(vErrors === null){
vErrors = [err16];
}
else {
vErrors.push(err16);
}
errors++;
}
}
if(data3.enrollUrl !== undefined){
let data5 = data3.enrollUrl;
if(typeof data5 === "string"){
if(func2(data5) > 2048){
const err17 = {instancePath:instancePath+"/gateway/enrollUrl",schemaPath:"#/$defs/httpsUrl/maxLength",keyword:"maxLength",params:{limit: 2048},message:"must NOT have more than 2048 characters",schema:2048,parentSchema:schema33,data:data5};
if(vErrors === null){
vErrors = [err17];
}
else {
vErrors.push(err17);
}
errors++;
}
if(!pattern5.test(data5)){
const err18 = {instancePath:instancePath+"/gateway/enrollUrl",schemaPath:"#/$defs/httpsUrl/pattern",keyword:"pattern",params:{pattern: "^(?!.*\\.\\.)https://[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?(?:/[A-Za-z0-9._~/-]*)?$"},message:"must match pattern \""+"^(?!.*\\.\\.)https://[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?(?:/[A-Za-z0-9._~/-]*)?$"+"\"",schema:"^(?!.*\\.\\.)https://[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?(?:/[A-Za-z0-9._~/-]*)?$",parentSchema:schema33,data:data5};
if(vErrors === null){
vErrors = [err18];
}
else {
vErrors.push(err18);
}
errors++;
}
}
else {
const err19 = {instancePath:instancePath+"/gateway/enrollUrl",schemaPath:"#/$defs/httpsUrl/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema33.type,parentSchema:schema33,data:data5};
if(vErrors === null){
vErrors = [err19];
}
else {
vErrors.push(err19);
}
errors++;
}
}
if(data3.replicas !== undefined){
let data6 = data3.replicas;
if(Array.isArray(data6)){
if(data6.length > 15){
const err20 = {instancePath:instancePath+"/gateway/replicas",schemaPath:"#/properties/gateway/properties/replicas/maxItems",keyword:"maxItems",params:{limit: 15},message:"must NOT have more than 15 items",schema:15,parentSchema:schema31.properties.gateway.properties.replicas,data:data6};
if(vErrors === null){
vErrors = [err20];
}
else {
vErrors.push(err20);
}
errors++;
}
const len0 = data6.length;
for(let i0=0; i0<len0; i0++){
let data7 = data6[i0];
if(data7 && typeof data7 == "object" && !Array.isArray(data7)){
if(data7.url === undefined){
const err21 = {instancePath:instancePath+"/gateway/replicas/" + i0,schemaPath:"#/properties/gateway/properties/replicas/items/required",keyword:"required",params:{missingProperty: "url"},message:"must have required property '"+"url"+"'",schema:schema31.properties.gateway.properties.replicas.items.required,parentSchema:schema31.properties.gateway.properties.replicas.items,data:data7};
if(vErrors === null){
vErrors = [err21];
}
else {
vErrors.push(err21);
}
errors++;
}
if(data7.enrollUrl === undefined){
const err22 = {instancePath:instancePath+"/gateway/replicas/" + i0,schemaPath:"#/properties/gateway/properties/replicas/items/required",keyword:"required",params:{missingProperty: "enrollUrl"},message:"must have required property '"+"enrollUrl"+"'",schema:schema31.properties.gateway.properties.replicas.items.required,parentSchema:schema31.properties.gateway.properties.replicas.items,data:data7};
if(vErrors === null){
vErrors = [err22];
}
else {
vErrors.push(err22);
}
errors++;
}
for(const key2 in data7){
if(!((key2 === "url") || (key2 === "enrollUrl"))){
const err23 = {instancePath:instancePath+"/gateway/replicas/" + i0,schemaPath:"#/properties/gateway/properties/replicas/items/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key2},message:"must NOT have additional properties",schema:false,parentSchema:schema31.properties.gateway.properties.replicas.items,data:data7};
if(vErrors === null){
vErrors = [err23];
}
else {
vErrors.push(err23);
}
errors++;
}
}
if(data7.url !== undefined){
let data8 = data7.url;
if(typeof data8 === "string"){
if(func2(data8) > 2048){
const err24 = {instancePath:instancePath+"/gateway/replicas/" + i0+"/url",schemaPath:"#/$defs/httpsUrl/maxLength",keyword:"maxLength",params:{limit: 2048},message:"must NOT have more than 2048 characters",schema:2048,parentSchema:schema33,data:data8};
if(vErrors === null){
vErrors = [err24];
}
else {
vErrors.push(err24);
}
errors++;
}
if(!pattern5.test(data8)){
const err25 = {instancePath:instancePath+"/gateway/replicas/" + i0+"/url",schemaPath:"#/$defs/httpsUrl/pattern",keyword:"pattern",params:{pattern: "^(?!.*\\.\\.)https://[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?(?:/[A-Za-z0-9._~/-]*)?$"},message:"must match pattern \""+"^(?!.*\\.\\.)https://[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?(?:/[A-Za-z0-9._~/-]*)?$"+"\"",schema:"^(?!.*\\.\\.)https://[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?(?:/[A-Za-z0-9._~/-]*)?$",parentSchema:schema33,data:data8};
if(vErrors === null){
vErrors = [err25];
}
else {
vErrors.push(err25);
}
errors++;
}
}
else {
const err26 = {instancePath:instancePath+"/gateway/replicas/" + i0+"/url",schemaPath:"#/$defs/httpsUrl/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema33.type,parentSchema:schema33,data:data8};
if(vErrors === null){
vErrors = [err26];
}
else {
vErrors.push(err26);
}
errors++;
}
}
if(data7.enrollUrl !== undefined){
let data9 = data7.enrollUrl;
if(typeof data9 === "string"){
if(func2(data9) > 2048){
const err27 = {instancePath:instancePath+"/gateway/replicas/" + i0+"/enrollUrl",schemaPath:"#/$defs/httpsUrl/maxLength",keyword:"maxLength",params:{limit: 2048},message:"must NOT have more than 2048 characters",schema:2048,parentSchema:schema33,data:data9};
if(vErrors === null){
vErrors = [err27];
}
else {
vErrors.push(err27);
}
errors++;
}
if(!pattern5.test(data9)){
const err28 = {instancePath:instancePath+"/gateway/replicas/" + i0+"/enrollUrl",schemaPath:"#/$defs/httpsUrl/pattern",keyword:"pattern",params:{pattern: "^(?!.*\\.\\.)https://[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?(?:/[A-Za-z0-9._~/-]*)?$"},message:"must match pattern \""+"^(?!.*\\.\\.)https://[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?(?:/[A-Za-z0-9._~/-]*)?$"+"\"",schema:"^(?!.*\\.\\.)https://[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?(?:/[A-Za-z0-9._~/-]*)?$",parentSchema:schema33,data:data9};
if(vErrors === null){
vErrors = [err28];
}
else {
vErrors.push(err28);
}
errors++;
}
}
else {
const err29 = {instancePath:instancePath+"/gateway/replicas/" + i0+"/enrollUrl",schemaPath:"#/$defs/httpsUrl/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema33.type,parentSchema:schema33,data:data9};
if(vErrors === null){
vErrors = [err29];
}
else {
vErrors.push(err29);
}
errors++;
}
}
}
else {
const err30 = {instancePath:instancePath+"/gateway/replicas/" + i0,schemaPath:"#/properties/gateway/properties/replicas/items/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema31.properties.gateway.properties.replicas.items.type,parentSchema:schema31.properties.gateway.properties.replicas.items,data:data7};
if(vErrors === null){
vErrors = [err30];
}
else {
vErrors.push(err30);
}
errors++;
}
}
let i1 = data6.length;
let j0;
if(i1 > 1){
outer0:
for(;i1--;){
for(j0 = i1; j0--;){
if(func0(data6[i1], data6[j0])){
const err31 = {instancePath:instancePath+"/gateway/replicas",schemaPath:"#/properties/gateway/properties/replicas/uniqueItems",keyword:"uniqueItems",params:{i: i1, j: j0},message:"must NOT have duplicate items (items ## "+j0+" and "+i1+" are identical)",schema:true,parentSchema:schema31.properties.gateway.properties.replicas,data:data6};
if(vErrors === null){
vErrors = [err31];
}
else {
vErrors.push(err31);
}
errors++;
break outer0;
}
}
}
}
}
else {
const err32 = {instancePath:instancePath+"/gateway/replicas",schemaPath:"#/properties/gateway/properties/replicas/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema31.properties.gateway.properties.replicas.type,parentSchema:schema31.properties.gateway.properties.replicas,data:data6};
if(vErrors === null){
vErrors = [err32];
}
else {
vErrors.push(err32);
}
errors++;
}
}
}
else {
const err33 = {instancePath:instancePath+"/gateway",schemaPath:"#/properties/gateway/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema31.properties.gateway.type,parentSchema:schema31.properties.gateway,data:data3};
if(vErrors === null){
vErrors = [err33];
}
else {
vErrors.push(err33);
}
errors++;
}
}
if(data.release !== undefined){
let data10 = data.release;
if(data10 && typeof data10 == "object" && !Array.isArray(data10)){
if(data10.url === undefined){
const err34 = {instancePath:instancePath+"/release",schemaPath:"#/properties/release/required",keyword:"required",params:{missingProperty: "url"},message:"must have required property '"+"url"+"'",schema:schema31.properties.release.required,parentSchema:schema31.properties.release,data:data10};
if(vErrors === null){
vErrors = [err34];
}
else {
vErrors.push(err34);
}
errors++;
}
if(data10.publicKey === undefined){
const err35 = {instancePath:instancePath+"/release",schemaPath:"#/properties/release/required",keyword:"required",params:{missingProperty: "publicKey"},message:"must have required property '"+"publicKey"+"'",schema:schema31.properties.release.required,parentSchema:schema31.properties.release,data:data10};
if(vErrors === null){
vErrors = [err35];
}
else {
vErrors.push(err35);
}
errors++;
}
if(data10.version === undefined){
const err36 = {instancePath:instancePath+"/release",schemaPath:"#/properties/release/required",keyword:"required",params:{missingProperty: "version"},message:"must have required property '"+"version"+"'",schema:schema31.properties.release.required,parentSchema:schema31.properties.release,data:data10};
if(vErrors === null){
vErrors = [err36];
}
else {
vErrors.push(err36);
}
errors++;
}
for(const key3 in data10){
if(!((((key3 === "url") || (key3 === "publicKey")) || (key3 === "version")) || (key3 === "caFile"))){
const err37 = {instancePath:instancePath+"/release",schemaPath:"#/properties/release/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key3},message:"must NOT have additional properties",schema:false,parentSchema:schema31.properties.release,data:data10};
if(vErrors === null){
vErrors = [err37];
}
else {
vErrors.push(err37);
}
errors++;
}
}
if(data10.url !== undefined){
let data11 = data10.url;
if(typeof data11 === "string"){
if(func2(data11) > 2048){
const err38 = {instancePath:instancePath+"/release/url",schemaPath:"#/$defs/httpsUrl/maxLength",keyword:"maxLength",params:{limit: 2048},message:"must NOT have more than 2048 characters",schema:2048,parentSchema:schema33,data:data11};
if(vErrors === null){
vErrors = [err38];
}
else {
vErrors.push(err38);
}
errors++;
}
if(!pattern5.test(data11)){
const err39 = {instancePath:instancePath+"/release/url",schemaPath:"#/$defs/httpsUrl/pattern",keyword:"pattern",params:{pattern: "^(?!.*\\.\\.)https://[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?(?:/[A-Za-z0-9._~/-]*)?$"},message:"must match pattern \""+"^(?!.*\\.\\.)https://[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?(?:/[A-Za-z0-9._~/-]*)?$"+"\"",schema:"^(?!.*\\.\\.)https://[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?(?:/[A-Za-z0-9._~/-]*)?$",parentSchema:schema33,data:data11};
if(vErrors === null){
vErrors = [err39];
}
else {
vErrors.push(err39);
}
errors++;
}
}
else {
const err40 = {instancePath:instancePath+"/release/url",schemaPath:"#/$defs/httpsUrl/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema33.type,parentSchema:schema33,data:data11};
if(vErrors === null){
vErrors = [err40];
}
else {
vErrors.push(err40);
}
errors++;
}
}
if(data10.publicKey !== undefined){
let data12 = data10.publicKey;
if(typeof data12 === "string"){
if(!pattern10.test(data12)){
const err41 = {instancePath:instancePath+"/release/publicKey",schemaPath:"#/properties/release/properties/publicKey/pattern",keyword:"pattern",params:{pattern: "^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$"},message:"must match pattern \""+"^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$"+"\"",schema:"^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$",parentSchema:schema31.properties.release.properties.publicKey,data:data12};
if(vErrors === null){
vErrors = [err41];
}
else {
vErrors.push(err41);
}
errors++;
}
}
else {
const err42 = {instancePath:instancePath+"/release/publicKey",schemaPath:"#/properties/release/properties/publicKey/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema31.properties.release.properties.publicKey.type,parentSchema:schema31.properties.release.properties.publicKey,data:data12};
if(vErrors === null){
vErrors = [err42];
}
else {
vErrors.push(err42);
}
errors++;
}
}
if(data10.version !== undefined){
let data13 = data10.version;
if(typeof data13 === "string"){
if(func2(data13) > 64){
const err43 = {instancePath:instancePath+"/release/version",schemaPath:"#/$defs/version/maxLength",keyword:"maxLength",params:{limit: 64},message:"must NOT have more than 64 characters",schema:64,parentSchema:schema38,data:data13};
if(vErrors === null){
vErrors = [err43];
}
else {
vErrors.push(err43);
}
errors++;
}
if(!pattern11.test(data13)){
const err44 = {instancePath:instancePath+"/release/version",schemaPath:"#/$defs/version/pattern",keyword:"pattern",params:{pattern: "^[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z][0-9A-Za-z.-]*)?$"},message:"must match pattern \""+"^[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z][0-9A-Za-z.-]*)?$"+"\"",schema:"^[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z][0-9A-Za-z.-]*)?$",parentSchema:schema38,data:data13};
if(vErrors === null){
vErrors = [err44];
}
else {
vErrors.push(err44);
}
errors++;
}
}
else {
const err45 = {instancePath:instancePath+"/release/version",schemaPath:"#/$defs/version/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema38.type,parentSchema:schema38,data:data13};
if(vErrors === null){
vErrors = [err45];
}
else {
vErrors.push(err45);
}
errors++;
}
}
if(data10.caFile !== undefined){
let data14 = data10.caFile;
if(typeof data14 === "string"){
if(func2(data14) > 4096){
const err46 = {instancePath:instancePath+"/release/caFile",schemaPath:"#/properties/release/properties/caFile/maxLength",keyword:"maxLength",params:{limit: 4096},message:"must NOT have more than 4096 characters",schema:4096,parentSchema:schema31.properties.release.properties.caFile,data:data14};
if(vErrors === null){
vErrors = [err46];
}
else {
vErrors.push(err46);
}
errors++;
}
if(!pattern12.test(data14)){
const err47 = {instancePath:instancePath+"/release/caFile",schemaPath:"#/properties/release/properties/caFile/pattern",keyword:"pattern",params:{pattern: "^[^\\u0000-\\u001f\\u007f]+$"},message:"must match pattern \""+"^[^\\u0000-\\u001f\\u007f]+$"+"\"",schema:"^[^\\u0000-\\u001f\\u007f]+$",parentSchema:schema31.properties.release.properties.caFile,data:data14};
if(vErrors === null){
vErrors = [err47];
}
else {
vErrors.push(err47);
}
errors++;
}
}
else {
const err48 = {instancePath:instancePath+"/release/caFile",schemaPath:"#/properties/release/properties/caFile/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema31.properties.release.properties.caFile.type,parentSchema:schema31.properties.release.properties.caFile,data:data14};
if(vErrors === null){
vErrors = [err48];
}
else {
vErrors.push(err48);
}
errors++;
}
}
}
else {
const err49 = {instancePath:instancePath+"/release",schemaPath:"#/properties/release/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema31.properties.release.type,parentSchema:schema31.properties.release,data:data10};
if(vErrors === null){
vErrors = [err49];
}
else {
vErrors.push(err49);
}
errors++;
}
}
if(data.operators !== undefined){
let data15 = data.operators;
if(data15 && typeof data15 == "object" && !Array.isArray(data15)){
if(data15.cidrs === undefined){
const err50 = {instancePath:instancePath+"/operators",schemaPath:"#/properties/operators/required",keyword:"required",params:{missingProperty: "cidrs"},message:"must have required property '"+"cidrs"+"'",schema:schema31.properties.operators.required,parentSchema:schema31.properties.operators,data:data15};
if(vErrors === null){
vErrors = [err50];
}
else {
vErrors.push(err50);
}
errors++;
}
if(data15.sshKeys === undefined){
const err51 = {instancePath:instancePath+"/operators",schemaPath:"#/properties/operators/required",keyword:"required",params:{missingProperty: "sshKeys"},message:"must have required property '"+"sshKeys"+"'",schema:schema31.properties.operators.required,parentSchema:schema31.properties.operators,data:data15};
if(vErrors === null){
vErrors = [err51];
}
else {
vErrors.push(err51);
}
errors++;
}
for(const key4 in data15){
if(!((key4 === "cidrs") || (key4 === "sshKeys"))){
const err52 = {instancePath:instancePath+"/operators",schemaPath:"#/properties/operators/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key4},message:"must NOT have additional properties",schema:false,parentSchema:schema31.properties.operators,data:data15};
if(vErrors === null){
vErrors = [err52];
}
else {
vErrors.push(err52);
}
errors++;
}
}
if(data15.cidrs !== undefined){
let data16 = data15.cidrs;
if(Array.isArray(data16)){
if(data16.length < 1){
const err53 = {instancePath:instancePath+"/operators/cidrs",schemaPath:"#/properties/operators/properties/cidrs/minItems",keyword:"minItems",params:{limit: 1},message:"must NOT have fewer than 1 items",schema:1,parentSchema:schema31.properties.operators.properties.cidrs,data:data16};
if(vErrors === null){
vErrors = [err53];
}
else {
vErrors.push(err53);
}
errors++;
}
const len1 = data16.length;
for(let i2=0; i2<len1; i2++){
let data17 = data16[i2];
if(typeof data17 === "string"){
if(func2(data17) > 49){
const err54 = {instancePath:instancePath+"/operators/cidrs/" + i2,schemaPath:"#/$defs/cidr/maxLength",keyword:"maxLength",params:{limit: 49},message:"must NOT have more than 49 characters",schema:49,parentSchema:schema39,data:data17};
if(vErrors === null){
vErrors = [err54];
}
else {
vErrors.push(err54);
}
errors++;
}
if(!pattern13.test(data17)){
const err55 = {instancePath:instancePath+"/operators/cidrs/" + i2,schemaPath:"#/$defs/cidr/pattern",keyword:"pattern",params:{pattern: "^((?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(\\.(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}/(3[0-2]|[12]?[0-9])|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*/(12[0-8]|1[01][0-9]|[1-9]?[0-9]))$"},message:"must match pattern \""+"^((?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(\\.(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}/(3[0-2]|[12]?[0-9])|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*/(12[0-8]|1[01][0-9]|[1-9]?[0-9]))$"+"\"",schema:"^((?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(\\.(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}/(3[0-2]|[12]?[0-9])|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*/(12[0-8]|1[01][0-9]|[1-9]?[0-9]))$",parentSchema:schema39,data:data17};
if(vErrors === null){
vErrors = [err55];
}
else {
vErrors.push(err55);
}
errors++;
}
}
else {
const err56 = {instancePath:instancePath+"/operators/cidrs/" + i2,schemaPath:"#/$defs/cidr/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema39.type,parentSchema:schema39,data:data17};
if(vErrors === null){
vErrors = [err56];
}
else {
vErrors.push(err56);
}
errors++;
}
}
let i3 = data16.length;
let j1;
if(i3 > 1){
outer1:
for(;i3--;){
for(j1 = i3; j1--;){
if(func0(data16[i3], data16[j1])){
const err57 = {instancePath:instancePath+"/operators/cidrs",schemaPath:"#/properties/operators/properties/cidrs/uniqueItems",keyword:"uniqueItems",params:{i: i3, j: j1},message:"must NOT have duplicate items (items ## "+j1+" and "+i3+" are identical)",schema:true,parentSchema:schema31.properties.operators.properties.cidrs,data:data16};
if(vErrors === null){
vErrors = [err57];
}
else {
vErrors.push(err57);
}
errors++;
break outer1;
}
}
}
}
}
else {
const err58 = {instancePath:instancePath+"/operators/cidrs",schemaPath:"#/properties/operators/properties/cidrs/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema31.properties.operators.properties.cidrs.type,parentSchema:schema31.properties.operators.properties.cidrs,data:data16};
if(vErrors === null){
vErrors = [err58];
}
else {
vErrors.push(err58);
}
errors++;
}
}
if(data15.sshKeys !== undefined){
let data18 = data15.sshKeys;
if(Array.isArray(data18)){
if(data18.length < 1){
const err59 = {instancePath:instancePath+"/operators/sshKeys",schemaPath:"#/properties/operators/properties/sshKeys/minItems",keyword:"minItems",params:{limit: 1},message:"must NOT have fewer than 1 items",schema:1,parentSchema:schema31.properties.operators.properties.sshKeys,data:data18};
if(vErrors === null){
vErrors = [err59];
}
else {
vErrors.push(err59);
}
errors++;
}
const len2 = data18.length;
for(let i4=0; i4<len2; i4++){
let data19 = data18[i4];
if(typeof data19 === "string"){
if(func2(data19) > 16384){
const err60 = {instancePath:instancePath+"/operators/sshKeys/" + i4,schemaPath:"#/$defs/sshPublicKey/maxLength",keyword:"maxLength",params:{limit: 16384},message:"must NOT have more than 16384 characters",schema:16384,parentSchema:schema40,data:data19};
if(vErrors === null){
vErrors = [err60];
}
else {
vErrors.push(err60);
}
errors++;
}
if(!pattern14.test(data19)){
const err61 = {instancePath:instancePath+"/operators/sshKeys/" + i4,schemaPath:"#/$defs/sshPublicKey/pattern",keyword:"pattern",params:{pattern: "^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp256|ecdsa-sha2-nistp384|ecdsa-sha2-nistp521|sk-ssh-ed25519@openssh\\.com|sk-ecdsa-sha2-nistp256@openssh\\.com) [A-Za-z0-9+/]+={0,2}( [A-Za-z0-9@._+-]{1,100})?$"},message:"must match pattern \""+"^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp256|ecdsa-sha2-nistp384|ecdsa-sha2-nistp521|sk-ssh-ed25519@openssh\\.com|sk-ecdsa-sha2-nistp256@openssh\\.com) [A-Za-z0-9+/]+={0,2}( [A-Za-z0-9@._+-]{1,100})?$"+"\"",schema:"^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp256|ecdsa-sha2-nistp384|ecdsa-sha2-nistp521|sk-ssh-ed25519@openssh\\.com|sk-ecdsa-sha2-nistp256@openssh\\.com) [A-Za-z0-9+/]+={0,2}( [A-Za-z0-9@._+-]{1,100})?$",parentSchema:schema40,data:data19};
if(vErrors === null){
vErrors = [err61];
}
else {
vErrors.push(err61);
}
errors++;
}
}
else {
const err62 = {instancePath:instancePath+"/operators/sshKeys/" + i4,schemaPath:"#/$defs/sshPublicKey/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema40.type,parentSchema:schema40,data:data19};
if(vErrors === null){
vErrors = [err62];
}
else {
vErrors.push(err62);
}
errors++;
}
}
let i5 = data18.length;
let j2;
if(i5 > 1){
outer2:
for(;i5--;){
for(j2 = i5; j2--;){
if(func0(data18[i5], data18[j2])){
const err63 = {instancePath:instancePath+"/operators/sshKeys",schemaPath:"#/properties/operators/properties/sshKeys/uniqueItems",keyword:"uniqueItems",params:{i: i5, j: j2},message:"must NOT have duplicate items (items ## "+j2+" and "+i5+" are identical)",schema:true,parentSchema:schema31.properties.operators.properties.sshKeys,data:data18};
if(vErrors === null){
vErrors = [err63];
}
else {
vErrors.push(err63);
}
errors++;
break outer2;
}
}
}
}
}
else {
const err64 = {instancePath:instancePath+"/operators/sshKeys",schemaPath:"#/properties/operators/properties/sshKeys/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema31.properties.operators.properties.sshKeys.type,parentSchema:schema31.properties.operators.properties.sshKeys,data:data18};
if(vErrors === null){
vErrors = [err64];
}
else {
vErrors.push(err64);
}
errors++;
}
}
}
else {
const err65 = {instancePath:instancePath+"/operators",schemaPath:"#/properties/operators/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema31.properties.operators.type,parentSchema:schema31.properties.operators,data:data15};
if(vErrors === null){
vErrors = [err65];
}
else {
vErrors.push(err65);
}
errors++;
}
}
if(data.providers !== undefined){
let data20 = data.providers;
if(data20 && typeof data20 == "object" && !Array.isArray(data20)){
for(const key5 in data20){
if(!(key5 === "hetzner")){
const err66 = {instancePath:instancePath+"/providers",schemaPath:"#/properties/providers/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key5},message:"must NOT have additional properties",schema:false,parentSchema:schema31.properties.providers,data:data20};
if(vErrors === null){
vErrors = [err66];
}
else {
vErrors.push(err66);
}
errors++;
}
}
if(data20.hetzner !== undefined){
let data21 = data20.hetzner;
if(data21 && typeof data21 == "object" && !Array.isArray(data21)){
for(const key6 in data21){
if(!(((key6 === "tokenEnv") || (key6 === "sshKeys")) || (key6 === "endpoint"))){
const err67 = {instancePath:instancePath+"/providers/hetzner",schemaPath:"#/properties/providers/properties/hetzner/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key6},message:"must NOT have additional properties",schema:false,parentSchema:schema31.properties.providers.properties.hetzner,data:data21};
if(vErrors === null){
vErrors = [err67];
}
else {
vErrors.push(err67);
}
errors++;
}
}
if(data21.tokenEnv !== undefined){
let data22 = data21.tokenEnv;
if(typeof data22 === "string"){
if(!pattern15.test(data22)){
const err68 = {instancePath:instancePath+"/providers/hetzner/tokenEnv",schemaPath:"#/properties/providers/properties/hetzner/properties/tokenEnv/pattern",keyword:"pattern",params:{pattern: "^[A-Z_][A-Z0-9_]{0,127}$"},message:"must match pattern \""+"^[A-Z_][A-Z0-9_]{0,127}$"+"\"",schema:"^[A-Z_][A-Z0-9_]{0,127}$",parentSchema:schema31.properties.providers.properties.hetzner.properties.tokenEnv,data:data22};
if(vErrors === null){
vErrors = [err68];
}
else {
vErrors.push(err68);
}
errors++;
}
}
else {
const err69 = {instancePath:instancePath+"/providers/hetzner/tokenEnv",schemaPath:"#/properties/providers/properties/hetzner/properties/tokenEnv/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema31.properties.providers.properties.hetzner.properties.tokenEnv.type,parentSchema:schema31.properties.providers.properties.hetzner.properties.tokenEnv,data:data22};
if(vErrors === null){
vErrors = [err69];
}
else {
vErrors.push(err69);
}
errors++;
}
}
if(data21.sshKeys !== undefined){
let data23 = data21.sshKeys;
if(Array.isArray(data23)){
const len3 = data23.length;
for(let i6=0; i6<len3; i6++){
let data24 = data23[i6];
if(typeof data24 === "string"){
if(!pattern16.test(data24)){
const err70 = {instancePath:instancePath+"/providers/hetzner/sshKeys/" + i6,schemaPath:"#/properties/providers/properties/hetzner/properties/sshKeys/items/pattern",keyword:"pattern",params:{pattern: "^[^\\u0000-\\u001f\\u007f]{1,128}$"},message:"must match pattern \""+"^[^\\u0000-\\u001f\\u007f]{1,128}$"+"\"",schema:"^[^\\u0000-\\u001f\\u007f]{1,128}$",parentSchema:schema31.properties.providers.properties.hetzner.properties.sshKeys.items,data:data24};
if(vErrors === null){
vErrors = [err70];
}
else {
vErrors.push(err70);
}
errors++;
}
}
else {
const err71 = {instancePath:instancePath+"/providers/hetzner/sshKeys/" + i6,schemaPath:"#/properties/providers/properties/hetzner/properties/sshKeys/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema31.properties.providers.properties.hetzner.properties.sshKeys.items.type,parentSchema:schema31.properties.providers.properties.hetzner.properties.sshKeys.items,data:data24};
if(vErrors === null){
vErrors = [err71];
}
else {
vErrors.push(err71);
}
errors++;
}
}
let i7 = data23.length;
let j3;
if(i7 > 1){
const indices0 = {};
for(;i7--;){
let item0 = data23[i7];
if(typeof item0 !== "string"){
continue;
}
if(typeof indices0[item0] == "number"){
j3 = indices0[item0];
const err72 = {instancePath:instancePath+"/providers/hetzner/sshKeys",schemaPath:"#/properties/providers/properties/hetzner/properties/sshKeys/uniqueItems",keyword:"uniqueItems",params:{i: i7, j: j3},message:"must NOT have duplicate items (items ## "+j3+" and "+i7+" are identical)",schema:true,parentSchema:schema31.properties.providers.properties.hetzner.properties.sshKeys,data:data23};
if(vErrors === null){
vErrors = [err72];
}
else {
vErrors.push(err72);
}
errors++;
break;
}
indices0[item0] = i7;
}
}
}
else {
const err73 = {instancePath:instancePath+"/providers/hetzner/sshKeys",schemaPath:"#/properties/providers/properties/hetzner/properties/sshKeys/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema31.properties.providers.properties.hetzner.properties.sshKeys.type,parentSchema:schema31.properties.providers.properties.hetzner.properties.sshKeys,data:data23};
if(vErrors === null){
vErrors = [err73];
}
else {
vErrors.push(err73);
}
errors++;
}
}
if(data21.endpoint !== undefined){
let data25 = data21.endpoint;
if(typeof data25 === "string"){
if(func2(data25) > 2048){
const err74 = {instancePath:instancePath+"/providers/hetzner/endpoint",schemaPath:"#/properties/providers/properties/hetzner/properties/endpoint/maxLength",keyword:"maxLength",params:{limit: 2048},message:"must NOT have more than 2048 characters",schema:2048,parentSchema:schema31.properties.providers.properties.hetzner.properties.endpoint,data:data25};
if(vErrors === null){
vErrors = [err74];
}
else {
vErrors.push(err74);
}
errors++;
}
if(!pattern17.test(data25)){
const err75 = {instancePath:instancePath+"/providers/hetzner/endpoint",schemaPath:"#/properties/providers/properties/hetzner/properties/endpoint/pattern",keyword:"pattern",params:{pattern: "^(?!.*\\.\\.)https?://[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?(?:/[A-Za-z0-9._~/-]*)?$"},message:"must match pattern \""+"^(?!.*\\.\\.)https?://[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?(?:/[A-Za-z0-9._~/-]*)?$"+"\"",schema:"^(?!.*\\.\\.)https?://[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?(?:/[A-Za-z0-9._~/-]*)?$",parentSchema:schema31.properties.providers.properties.hetzner.properties.endpoint,data:data25};
if(vErrors === null){
vErrors = [err75];
}
else {
vErrors.push(err75);
}
errors++;
}
}
else {
const err76 = {instancePath:instancePath+"/providers/hetzner/endpoint",schemaPath:"#/properties/providers/properties/hetzner/properties/endpoint/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema31.properties.providers.properties.hetzner.properties.endpoint.type,parentSchema:schema31.properties.providers.properties.hetzner.properties.endpoint,data:data25};
if(vErrors === null){
vErrors = [err76];
}
else {
vErrors.push(err76);
}
errors++;
}
}
}
else {
const err77 = {instancePath:instancePath+"/providers/hetzner",schemaPath:"#/properties/providers/properties/hetzner/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema31.properties.providers.properties.hetzner.type,parentSchema:schema31.properties.providers.properties.hetzner,data:data21};
if(vErrors === null){
vErrors = [err77];
}
else {
vErrors.push(err77);
}
errors++;
}
}
}
else {
const err78 = {instancePath:instancePath+"/providers",schemaPath:"#/properties/providers/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema31.properties.providers.type,parentSchema:schema31.properties.providers,data:data20};
if(vErrors === null){
vErrors = [err78];
}
else {
vErrors.push(err78);
}
errors++;
}
}
if(data.pools !== undefined){
let data26 = data.pools;
if(data26 && typeof data26 == "object" && !Array.isArray(data26)){
if(Object.keys(data26).length < 1){
const err79 = {instancePath:instancePath+"/pools",schemaPath:"#/properties/pools/minProperties",keyword:"minProperties",params:{limit: 1},message:"must NOT have fewer than 1 properties",schema:1,parentSchema:schema31.properties.pools,data:data26};
if(vErrors === null){
vErrors = [err79];
}
else {
vErrors.push(err79);
}
errors++;
}
for(const key7 in data26){
const _errs84 = errors;
if(typeof key7 === "string"){
if(!pattern4.test(key7)){
const err80 = {instancePath:instancePath+"/pools",schemaPath:"#/$defs/dnsLabel/pattern",keyword:"pattern",params:{pattern: "^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"},message:"must match pattern \""+"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"+"\"",schema:"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$",parentSchema:schema32,data:key7,propertyName:key7};
if(vErrors === null){
vErrors = [err80];
}
else {
vErrors.push(err80);
}
errors++;
}
}
else {
const err81 = {instancePath:instancePath+"/pools",schemaPath:"#/$defs/dnsLabel/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema32.type,parentSchema:schema32,data:key7,propertyName:key7};
if(vErrors === null){
vErrors = [err81];
}
else {
vErrors.push(err81);
}
errors++;
}
var valid28 = _errs84 === errors;
if(!valid28){
const err82 = {instancePath:instancePath+"/pools",schemaPath:"#/properties/pools/propertyNames",keyword:"propertyNames",params:{propertyName: key7},message:"property name must be valid",schema:schema31.properties.pools.propertyNames,parentSchema:schema31.properties.pools,data:data26};
if(vErrors === null){
vErrors = [err82];
}
else {
vErrors.push(err82);
}
errors++;
}
}
for(const key8 in data26){
if(!(validate21(data26[key8], {instancePath:instancePath+"/pools/" + key8.replace(/~/g, "~0").replace(/\//g, "~1"),parentData:data26,parentDataProperty:key8,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate21.errors : vErrors.concat(validate21.errors);
errors = vErrors.length;
}
}
}
else {
const err83 = {instancePath:instancePath+"/pools",schemaPath:"#/properties/pools/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema31.properties.pools.type,parentSchema:schema31.properties.pools,data:data26};
if(vErrors === null){
vErrors = [err83];
}
else {
vErrors.push(err83);
}
errors++;
}
}
if(data.nodes !== undefined){
let data28 = data.nodes;
if(Array.isArray(data28)){
const len4 = data28.length;
for(let i8=0; i8<len4; i8++){
if(!(validate23(data28[i8], {instancePath:instancePath+"/nodes/" + i8,parentData:data28,parentDataProperty:i8,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate23.errors : vErrors.concat(validate23.errors);
errors = vErrors.length;
}
}
}
else {
const err84 = {instancePath:instancePath+"/nodes",schemaPath:"#/properties/nodes/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema31.properties.nodes.type,parentSchema:schema31.properties.nodes,data:data28};
if(vErrors === null){
vErrors = [err84];
}
else {
vErrors.push(err84);
}
errors++;
}
}
if(data.canary !== undefined){
let data30 = data.canary;
if(typeof data30 === "string"){
if(!pattern24.test(data30)){
const err85 = {instancePath:instancePath+"/canary",schemaPath:"#/$defs/nodeId/pattern",keyword:"pattern",params:{pattern: "^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$"},message:"must match pattern \""+"^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$"+"\"",schema:"^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$",parentSchema:schema49,data:data30};
if(vErrors === null){
vErrors = [err85];
}
else {
vErrors.push(err85);
}
errors++;
}
}
else {
const err86 = {instancePath:instancePath+"/canary",schemaPath:"#/$defs/nodeId/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema49.type,parentSchema:schema49,data:data30};
if(vErrors === null){
vErrors = [err86];
}
else {
vErrors.push(err86);
}
errors++;
}
}
if(data.features !== undefined){
let data31 = data.features;
if(data31 && typeof data31 == "object" && !Array.isArray(data31)){
for(const key9 in data31){
if(!((((key9 === "containers") || (key9 === "tailscale")) || (key9 === "session")) || (key9 === "preset"))){
const err87 = {instancePath:instancePath+"/features",schemaPath:"#/$defs/features/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key9},message:"must NOT have additional properties",schema:false,parentSchema:schema45,data:data31};
if(vErrors === null){
vErrors = [err87];
}
else {
vErrors.push(err87);
}
errors++;
}
}
if(data31.containers !== undefined){
let data32 = data31.containers;
if(typeof data32 !== "boolean"){
const err88 = {instancePath:instancePath+"/features/containers",schemaPath:"#/$defs/features/properties/containers/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema45.properties.containers.type,parentSchema:schema45.properties.containers,data:data32};
if(vErrors === null){
vErrors = [err88];
}
else {
vErrors.push(err88);
}
errors++;
}
}
if(data31.tailscale !== undefined){
let data33 = data31.tailscale;
if(typeof data33 !== "boolean"){
const err89 = {instancePath:instancePath+"/features/tailscale",schemaPath:"#/$defs/features/properties/tailscale/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema45.properties.tailscale.type,parentSchema:schema45.properties.tailscale,data:data33};
if(vErrors === null){
vErrors = [err89];
}
else {
vErrors.push(err89);
}
errors++;
}
}
if(data31.session !== undefined){
let data34 = data31.session;
if(!(data34 === "headless")){
const err90 = {instancePath:instancePath+"/features/session",schemaPath:"#/$defs/features/properties/session/enum",keyword:"enum",params:{allowedValues: schema45.properties.session.enum},message:"must be equal to one of the allowed values",schema:schema45.properties.session.enum,parentSchema:schema45.properties.session,data:data34};
if(vErrors === null){
vErrors = [err90];
}
else {
vErrors.push(err90);
}
errors++;
}
}
if(data31.preset !== undefined){
let data35 = data31.preset;
if(typeof data35 === "string"){
if(!pattern21.test(data35)){
const err91 = {instancePath:instancePath+"/features/preset",schemaPath:"#/$defs/features/properties/preset/pattern",keyword:"pattern",params:{pattern: "^[a-z0-9][a-z0-9._-]{0,63}$"},message:"must match pattern \""+"^[a-z0-9][a-z0-9._-]{0,63}$"+"\"",schema:"^[a-z0-9][a-z0-9._-]{0,63}$",parentSchema:schema45.properties.preset,data:data35};
if(vErrors === null){
vErrors = [err91];
}
else {
vErrors.push(err91);
}
errors++;
}
}
else {
const err92 = {instancePath:instancePath+"/features/preset",schemaPath:"#/$defs/features/properties/preset/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema45.properties.preset.type,parentSchema:schema45.properties.preset,data:data35};
if(vErrors === null){
vErrors = [err92];
}
else {
vErrors.push(err92);
}
errors++;
}
}
}
else {
const err93 = {instancePath:instancePath+"/features",schemaPath:"#/$defs/features/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema45.type,parentSchema:schema45,data:data31};
if(vErrors === null){
vErrors = [err93];
}
else {
vErrors.push(err93);
}
errors++;
}
}
if(data.exposure !== undefined){
let data36 = data.exposure;
if(data36 && typeof data36 == "object" && !Array.isArray(data36)){
for(const key10 in data36){
if(!(((key10 === "publicSsh") || (key10 === "publicPorts")) || (key10 === "otherListeners"))){
const err94 = {instancePath:instancePath+"/exposure",schemaPath:"#/$defs/exposure/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key10},message:"must NOT have additional properties",schema:false,parentSchema:schema46,data:data36};
if(vErrors === null){
vErrors = [err94];
}
else {
vErrors.push(err94);
}
errors++;
}
}
if(data36.publicSsh !== undefined){
let data37 = data36.publicSsh;
if(typeof data37 !== "boolean"){
const err95 = {instancePath:instancePath+"/exposure/publicSsh",schemaPath:"#/$defs/exposure/properties/publicSsh/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema46.properties.publicSsh.type,parentSchema:schema46.properties.publicSsh,data:data37};
if(vErrors === null){
vErrors = [err95];
}
else {
vErrors.push(err95);
}
errors++;
}
}
if(data36.publicPorts !== undefined){
let data38 = data36.publicPorts;
if(Array.isArray(data38)){
const len5 = data38.length;
for(let i9=0; i9<len5; i9++){
let data39 = data38[i9];
if(data39 && typeof data39 == "object" && !Array.isArray(data39)){
if(data39.protocol === undefined){
const err96 = {instancePath:instancePath+"/exposure/publicPorts/" + i9,schemaPath:"#/$defs/exposure/properties/publicPorts/items/required",keyword:"required",params:{missingProperty: "protocol"},message:"must have required property '"+"protocol"+"'",schema:schema46.properties.publicPorts.items.required,parentSchema:schema46.properties.publicPorts.items,data:data39};
if(vErrors === null){
vErrors = [err96];
}
else {
vErrors.push(err96);
}
errors++;
}
if(data39.port === undefined){
const err97 = {instancePath:instancePath+"/exposure/publicPorts/" + i9,schemaPath:"#/$defs/exposure/properties/publicPorts/items/required",keyword:"required",params:{missingProperty: "port"},message:"must have required property '"+"port"+"'",schema:schema46.properties.publicPorts.items.required,parentSchema:schema46.properties.publicPorts.items,data:data39};
if(vErrors === null){
vErrors = [err97];
}
else {
vErrors.push(err97);
}
errors++;
}
for(const key11 in data39){
if(!((key11 === "protocol") || (key11 === "port"))){
const err98 = {instancePath:instancePath+"/exposure/publicPorts/" + i9,schemaPath:"#/$defs/exposure/properties/publicPorts/items/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key11},message:"must NOT have additional properties",schema:false,parentSchema:schema46.properties.publicPorts.items,data:data39};
if(vErrors === null){
vErrors = [err98];
}
else {
vErrors.push(err98);
}
errors++;
}
}
if(data39.protocol !== undefined){
let data40 = data39.protocol;
if(!((data40 === "tcp") || (data40 === "udp"))){
const err99 = {instancePath:instancePath+"/exposure/publicPorts/" + i9+"/protocol",schemaPath:"#/$defs/exposure/properties/publicPorts/items/properties/protocol/enum",keyword:"enum",params:{allowedValues: schema46.properties.publicPorts.items.properties.protocol.enum},message:"must be equal to one of the allowed values",schema:schema46.properties.publicPorts.items.properties.protocol.enum,parentSchema:schema46.properties.publicPorts.items.properties.protocol,data:data40};
if(vErrors === null){
vErrors = [err99];
}
else {
vErrors.push(err99);
}
errors++;
}
}
if(data39.port !== undefined){
let data41 = data39.port;
if(!(((typeof data41 == "number") && (!(data41 % 1) && !isNaN(data41))) && (isFinite(data41)))){
const err100 = {instancePath:instancePath+"/exposure/publicPorts/" + i9+"/port",schemaPath:"#/$defs/exposure/properties/publicPorts/items/properties/port/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema46.properties.publicPorts.items.properties.port.type,parentSchema:schema46.properties.publicPorts.items.properties.port,data:data41};
if(vErrors === null){
vErrors = [err100];
}
else {
vErrors.push(err100);
}
errors++;
}
if((typeof data41 == "number") && (isFinite(data41))){
if(data41 > 65535 || isNaN(data41)){
const err101 = {instancePath:instancePath+"/exposure/publicPorts/" + i9+"/port",schemaPath:"#/$defs/exposure/properties/publicPorts/items/properties/port/maximum",keyword:"maximum",params:{comparison: "<=", limit: 65535},message:"must be <= 65535",schema:65535,parentSchema:schema46.properties.publicPorts.items.properties.port,data:data41};
if(vErrors === null){
vErrors = [err101];
}
else {
vErrors.push(err101);
}
errors++;
}
if(data41 < 1 || isNaN(data41)){
const err102 = {instancePath:instancePath+"/exposure/publicPorts/" + i9+"/port",schemaPath:"#/$defs/exposure/properties/publicPorts/items/properties/port/minimum",keyword:"minimum",params:{comparison: ">=", limit: 1},message:"must be >= 1",schema:1,parentSchema:schema46.properties.publicPorts.items.properties.port,data:data41};
if(vErrors === null){
vErrors = [err102];
}
else {
vErrors.push(err102);
}
errors++;
}
}
}
}
else {
const err103 = {instancePath:instancePath+"/exposure/publicPorts/" + i9,schemaPath:"#/$defs/exposure/properties/publicPorts/items/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema46.properties.publicPorts.items.type,parentSchema:schema46.properties.publicPorts.items,data:data39};
if(vErrors === null){
vErrors = [err103];
}
else {
vErrors.push(err103);
}
errors++;
}
}
let i10 = data38.length;
let j4;
if(i10 > 1){
outer3:
for(;i10--;){
for(j4 = i10; j4--;){
if(func0(data38[i10], data38[j4])){
const err104 = {instancePath:instancePath+"/exposure/publicPorts",schemaPath:"#/$defs/exposure/properties/publicPorts/uniqueItems",keyword:"uniqueItems",params:{i: i10, j: j4},message:"must NOT have duplicate items (items ## "+j4+" and "+i10+" are identical)",schema:true,parentSchema:schema46.properties.publicPorts,data:data38};
if(vErrors === null){
vErrors = [err104];
}
else {
vErrors.push(err104);
}
errors++;
break outer3;
}
}
}
}
}
else {
const err105 = {instancePath:instancePath+"/exposure/publicPorts",schemaPath:"#/$defs/exposure/properties/publicPorts/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema46.properties.publicPorts.type,parentSchema:schema46.properties.publicPorts,data:data38};
if(vErrors === null){
vErrors = [err105];
}
else {
vErrors.push(err105);
}
errors++;
}
}
if(data36.otherListeners !== undefined){
let data42 = data36.otherListeners;
if(!((data42 === "warn") || (data42 === "fail"))){
const err106 = {instancePath:instancePath+"/exposure/otherListeners",schemaPath:"#/$defs/exposure/properties/otherListeners/enum",keyword:"enum",params:{allowedValues: schema46.properties.otherListeners.enum},message:"must be equal to one of the allowed values",schema:schema46.properties.otherListeners.enum,parentSchema:schema46.properties.otherListeners,data:data42};
if(vErrors === null){
vErrors = [err106];
}
else {
vErrors.push(err106);
}
errors++;
}
}
}
else {
const err107 = {instancePath:instancePath+"/exposure",schemaPath:"#/$defs/exposure/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema46.type,parentSchema:schema46,data:data36};
if(vErrors === null){
vErrors = [err107];
}
else {
vErrors.push(err107);
}
errors++;
}
}
}
else {
const err108 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema31.type,parentSchema:schema31,data};
if(vErrors === null){
vErrors = [err108];
}
else {
vErrors.push(err108);
}
errors++;
}
validate20.errors = vErrors;
return errors === 0;
}
validate20.evaluated = {"props":true,"dynamicProps":false,"dynamicItems":false};

