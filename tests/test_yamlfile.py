"""remote.yamlfile keeps the documents it parsed: a text read again is a copy of its document, never one a
caller changed, with its lines; a text that fails is refused every time, naming its own file."""

from __future__ import annotations

from pathlib import Path

import pytest

from remote import yamlfile
from remote.errors import ConfigError

TEXT = "name: demo\ntasks:\n  - name: a\n    steps: [{action: go_home}]\n"


def test_a_text_read_again_is_a_fresh_copy_with_its_lines():
    first = yamlfile.parse_yaml_text(TEXT, Path("a.yaml"))
    first["tasks"][0]["name"] = "changed by a caller"
    first["extra"] = 1
    again = yamlfile.parse_yaml_text(TEXT, Path("b.yaml"))
    assert again == {"name": "demo", "tasks": [{"name": "a", "steps": [{"action": "go_home"}]}]}
    assert again is not first and again["tasks"][0] is not first["tasks"][0]
    assert isinstance(again, yamlfile.LineDict) and again["tasks"][0].line == 3
    assert again.line_of_key("tasks") == 2 and again["tasks"][0].line_of_key("steps") == 4


@pytest.mark.parametrize("name", ["one.yaml", "two.yaml"])
def test_a_text_that_fails_is_refused_each_time_with_its_own_file(name):
    with pytest.raises(ConfigError) as refused:
        yamlfile.parse_yaml_text("a: 1\na: 2\n", Path(name))
    assert "duplicate key 'a'" in str(refused.value) and name in str(refused.value)
