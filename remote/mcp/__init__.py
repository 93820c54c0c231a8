"""`python -m remote mcp`: the phone as MCP tools for any AI agent.

Layout: ``session`` (the phone, the allow list, the last screenshot's space),
``shot`` (the screenshot and its element list), ``aim`` (x,y / element number /
target_ref to a device point), ``gestures`` / ``keys`` / ``apps`` /
``clipboard`` / ``batch`` / ``teach`` / ``tasks`` (what the tools do),
``asking`` (elicitation from a running tool), ``calls`` (threads, deadlines,
errors), ``tools_device`` / ``tools_people`` (the MCP tool surface) and
``server`` (stdio and streamable HTTP). Nothing in the product imports this
package: it sits on top of the runner and the core.
"""
