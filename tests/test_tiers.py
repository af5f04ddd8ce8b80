"""The test tiers (tests/conftest.py TIERS, docs/testing.md): every test file has exactly one
tier, so that a new file cannot slip out of `make test-fast` and the tier targets unnoticed,
and its tests carry the tier's marker."""

import re
from pathlib import Path

from .conftest import REPO, TIER_NAMES, TIERS

TESTS = Path(__file__).resolve().parent
TIER_ORDER = ("unit", "oracle", "cli", "server")


def test_every_test_file_has_one_tier():
    files = {p.name for p in TESTS.glob("test_*.py")}
    assert sorted(files - set(TIERS)) == [], "give these files a tier in tests/conftest.py TIERS"
    assert sorted(set(TIERS) - files) == [], "TIERS names files that are gone"
    for name, marks in TIERS.items():
        assert marks and marks[0] in TIER_ORDER, (name, marks)
        assert set(marks[1:]) <= {"fast"} and len(set(marks)) == len(marks), (name, marks)
    assert set(TIER_NAMES) == {*TIER_ORDER, "fast"}


def test_a_test_carries_its_files_markers(request):
    names = {m.name for m in request.node.iter_markers()}
    assert {"unit", "fast"} <= names and not names & {"oracle", "cli", "server"}


def test_every_tier_has_a_make_target_and_a_paragraph():
    makefile = (REPO / "Makefile").read_text()
    testing = (REPO / "docs" / "testing.md").read_text()
    for tier in (*TIER_ORDER, "fast"):
        assert re.search(rf"^test-{tier}:", makefile, re.M), tier
        assert f"`make test-{tier}`" in testing, tier
    # no tier is empty
    for tier in TIER_ORDER:
        assert any(marks[0] == tier for marks in TIERS.values()), tier
