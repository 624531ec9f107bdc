"""Dynamic least load (DLLC): where the node agent reads each member's load.

Every member of a dynamic-least-load pool runs fulcrum-loadd. The node agent reads its
JSON endpoint and, for an IPVS service, writes the loads into the ip_vs_dllc module (or,
without the module, turns them into wlc weights); for a HAProxy pool, HAProxy asks the
same program's agent-check itself and the agent reads loads only for the console. Both
renderers describe a member the same way, with this function.
"""


def feedback_target(pool, member):
    """Where ``member`` of the DLLC ``pool`` answers with its load."""
    return {"pool": pool.name, "member": member.name, "address": member.address, "port": pool.feedback_http_port}
