"""Chrome's handler: templates as usual, plus a URL clean-up no YAML can express.

"打开网页 example.com" should open https://example.com, and a URL said with a trailing
full stop should not carry it. A module's handler.py defines ``Handler(AppHandler)``.
"""

from __future__ import annotations

import re

from remote.apps.base import AppHandler, build_plan
from remote.core.records import TaskPlan


class Handler(AppHandler):
    def plan(self, task: str) -> TaskPlan | None:
        found = self.match(task)
        if found is None:
            return None
        template, slots = found
        if "url" in slots:
            url = slots["url"].strip().rstrip("。，,.!！")
            if not re.match(r"^[a-zA-Z][\w+.-]*://", url):
                url = "https://" + url
            slots = {**slots, "url": url}
        return build_plan(self.module, template, slots)
