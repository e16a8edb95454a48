"""The product's modules import each other in one direction only: no module of helpdesk, captain or config
imports itself through another.

The outbox used to close a loop (`services/messages -> services/delivery -> tasks -> services/delivery_outcomes
-> services/messages`), hidden by imports inside functions. grimp reads every import statement, function-level
ones included, so a loop reintroduced that way fails here too.
"""

from __future__ import annotations

import grimp
import pytest


@pytest.mark.parametrize("package", ["helpdesk", "captain", "config"])
def test_no_module_imports_itself_through_another(package):
    graph = grimp.build_graph(package)
    loops = [
        chain
        for module in sorted(graph.modules)
        for imported in sorted(graph.find_modules_directly_imported_by(module))
        if (chain := graph.find_shortest_chain(importer=imported, imported=module))
    ]
    assert loops == []


def test_the_outbox_package_sits_below_the_services_that_queue_replies():
    graph = grimp.build_graph("helpdesk")
    assert graph.find_shortest_chain(
        importer="helpdesk.services.messages", imported="helpdesk.delivery.publish"
    )
    for module in ("helpdesk.delivery.outcomes", "helpdesk.delivery.send", "helpdesk.tasks"):
        assert graph.find_shortest_chain(importer=module, imported="helpdesk.services.messages") is None
