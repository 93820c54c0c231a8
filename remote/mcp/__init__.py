"""`python -m remote mcp`: the phone as MCP tools for any AI agent.

Layout: ``session`` (the shared phone hub; per MCP session the allow list, the
last screenshot's space and the image size), ``shot`` (the screenshot and its
element list), ``aim`` (x,y / element number / target_ref to a device point)
and ``touch`` (the element a touch there reaches), ``access`` / ``gated`` /
``remote.core.device.keyrules`` (the allow list, the gated controller that checks it before and
after every act, what raw key codes do), ``gestures`` / ``keys`` / ``apps`` /
``clipboard`` / ``batch`` / ``teach`` / ``tasks`` (what the tools do),
``asking`` (elicitation from a running tool), ``calls`` and ``deadline``
(sessions, threads, deadlines, errors), ``tools_device`` / ``tools_people``
(the MCP tool surface) and ``server`` (stdio and streamable HTTP). Nothing in the product imports this
package: it sits on top of the runner and the core.
"""
