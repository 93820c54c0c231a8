"""The learning bench judges every sentence it tries against learned tasks by one rule (issue 40): a near
sentence (another app, another verb, a sensitive slot value) is right when it is not replayed or replayed
only after asking the person; a learned sentence is right when it is replayed without asking. The kind of
a near sentence never changes how it is judged."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from learn_bench import NEAR, RIGHT, TASKS, Asked, Near, judge_near  # noqa: E402

RUNS = [("learned", (), Near.REPLAYED), ("learned", ("sensitive step: mentions '支付'",), Near.ASKED),
        ("model", (), Near.NOT_REPLAYED), ("model", ("a delete",), Near.NOT_REPLAYED), (None, (), Near.NOT_REPLAYED)]


@pytest.mark.parametrize(("kind", "task", "sentence"), [(k, t, s) for k, t, s, _ in NEAR])
@pytest.mark.parametrize(("source", "questions", "outcome"), RUNS)
def test_every_near_sentence_is_judged_by_the_same_rule(kind, task, sentence, source, questions, outcome):
    assert task in TASKS, f"{sentence!r} is close to a task the bench teaches"
    assert judge_near(source, questions) is outcome
    assert (outcome in RIGHT["near"]) == (outcome is not Near.REPLAYED)


def test_a_learned_sentence_is_right_only_replayed_without_asking_and_a_near_one_only_otherwise():
    right = {outcome: (outcome in RIGHT["learned"], outcome in RIGHT["near"]) for outcome in Near}
    assert right == {Near.REPLAYED: (True, False), Near.ASKED: (False, True), Near.NOT_REPLAYED: (False, True)}


def test_the_near_sentences_cover_another_app_another_verb_and_a_sensitive_value():
    assert {k for k, *_ in NEAR} == {"other app", "other verb", "sensitive value"}
    assert all(s not in {t for runs in TASKS.values() for t, _ in runs} for _, _, s, _ in NEAR)


def test_the_person_records_each_question_and_answers_no():
    person = Asked()
    assert person.confirm("pay?") is False and person.choose("which?", ["a", "b"]) is None
    assert person.questions == ["pay?", "which?"]
    assert judge_near("learned", person.questions) is Near.ASKED
