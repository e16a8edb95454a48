"""tests/support/xdist_groups.py: which tests scripts/test keeps on one xdist worker."""

from __future__ import annotations

import pytest

from tests.support.xdist_groups import HEAVY, group_for


@pytest.mark.parametrize(
    ("nodeid", "markers"),
    [
        ("tests/captain/local_llm/test_local_model_smoke.py::test_x", {"local_llm"}),
        ("tests/browser/test_admin_browser.py::test_x", {"browser", "django_db"}),
        ("tests/security/test_content_security_policy.py::test_x", {"browser"}),
        ("tests/reliability/test_bursts.py::test_x[a-b]", {"e2e", "django_db"}),
        ("tests/api_contract/test_schemathesis.py::test_x[admin]", set()),
    ],
)
def test_the_tests_that_load_the_machine_share_one_group(nodeid, markers):
    assert group_for(nodeid, markers, shared_fixture=False) == HEAVY
    assert group_for(nodeid, markers, shared_fixture=True) == HEAVY  # heavy wins over the module's own group


def test_a_module_with_a_module_scoped_fixture_is_a_group_of_its_own():
    nodeid = "tests/captain/knowledge/test_fetch.py::TestX::test_y[1]"
    assert group_for(nodeid, {"django_db"}, shared_fixture=True) == "tests/captain/knowledge/test_fetch.py"


def test_any_other_test_goes_wherever_a_worker_is_free():
    assert group_for("tests/helpdesk/api/test_schema.py::test_x", {"django_db"}, shared_fixture=False) is None
    assert (
        group_for("tests/concurrency/test_ingest_locking.py::test_x", {"postgres"}, shared_fixture=False)
        is None
    )
