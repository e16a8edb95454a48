"""The routing benchmark's scoring on a tiny dataset with a scripted router and a fake encoder."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from django.conf import settings

from bench.routing.cli import main
from bench.routing.dataset import graph_from_dataset, load_dataset
from bench.routing.figures import PassResult, StrategyResult, TurnRecord, format_table, never_switch
from bench.routing.harness import run_benchmark
from captain.runtime.routing import Decision
from tests.captain.routing.support import KeywordEncoder, ScriptedRouter, answer
from tests.support.fake_llm_server import FakeLLMServer, text

GAME = {
    "id": "g1",
    "assistant": {"name": "引导", "description": "介绍游戏"},
    "scenarios": [
        {"key": "setup", "title": "游戏准备", "description": "进行游戏准备。"},
        {"key": "speak", "title": "人类玩家发言", "description": "人类玩家进行发言。"},
    ],
    "edges": [["triage", "setup"], ["setup", "speak"]],
    "nodes": {
        "triage": {"rules": [{"match": "contains", "value": "开始", "to": "setup"}]},
        "setup": {"rules": [{"match": "contains", "value": "开始", "to": "speak"}]},
    },
    "turns": [
        {"user": "开始游戏", "expect": "setup", "assistant": "词语是苹果"},
        {"user": "好的", "expect": "setup"},
    ],
}


def test_scores_accuracy_slides_out_of_candidates_and_calls():
    # Coze: triage -> setup by "开始" in its prompt (model says 1), then setup re-checks the same input and
    # slides to speak (model says 2); on "好的" it answers 0.
    def coze_answer(call):
        prompt = call["messages"][0]["content"]
        last = prompt.rstrip().rsplit("user:", 1)[-1]
        if "开始" not in last or '"人类玩家发言"' not in prompt:
            content = "0"
        elif '"游戏准备"' not in prompt:  # at setup: 2 = 人类玩家发言
            content = "2"
        else:  # at triage: 1 = 游戏准备
            content = "1"
        return answer(content, input_tokens=len(prompt) // 4)

    coze_router = ScriptedRouter(*[coze_answer] * 20)
    results = run_benchmark(
        [GAME],
        ["ours", "coze"],
        encoder=KeywordEncoder(["游戏", "发言"]),
        router_for=lambda endpoint: (coze_router, "m"),
        progress=None,
    )
    ours, coze = (r.figures() for r in results)
    assert ours["accuracy"] == 1.0 and ours["llm_calls_per_turn"] == 0 and ours["slides"] == 0
    assert ours["llm_calls_on_rule_turns"] == 0
    assert coze["slides"] == 1 and coze["accuracy"] == 0.0
    assert coze["slides_on_same_input"] == 1 and ours["slides_on_same_input"] == 0
    assert set(ours) >= {
        "accuracy",
        "accuracy_teacher_forced",
        "llm_calls_per_turn",
        "router_prompt_tokens_p50",
        "router_prompt_tokens_p95",
        "router_prompt_growth",
        "slides",
        "out_of_candidates",
        "turns",
    }
    table = format_table(results, never_switch([GAME]))
    assert "never-switch" in table and "coze" in table


def test_bundled_datasets_are_valid_and_big_enough():
    from django.conf import settings

    main = load_dataset(settings.BASE_DIR / "bench" / "data" / "routing_conversations.jsonl")
    held = load_dataset(settings.BASE_DIR / "bench" / "data" / "routing_heldout.jsonl")
    test = load_dataset(settings.BASE_DIR / "bench" / "data" / "routing_test.jsonl")
    for conv in [*main, *held, *test]:
        graph = graph_from_dataset(conv)
        for turn in conv["turns"]:
            assert turn["expect"] in graph.nodes, (conv["id"], turn)
    assert len(main) >= 40 and sum(len(c["turns"]) for c in main) >= 300
    assert any(len(c["turns"]) >= 20 for c in main)
    assert {c["id"].split("-")[1] for c in main} >= {"en", "zh"}
    assert not {t["user"] for c in main for t in c["turns"] if t["expect"] not in ("triage",)} & {
        t["user"] for c in held for t in c["turns"] if not c["id"].startswith("undercover")
    }
    # The test set is written from its own material: no customer sentence of the other two files.
    assert len(test) >= 24 and sum(len(c["turns"]) for c in test) >= 240
    assert not {t["user"] for c in test for t in c["turns"]} & {
        t["user"] for c in [*main, *held] for t in c["turns"]
    }


def test_prompt_growth_is_also_measured_per_template():
    """Short A-or-B questions at turn 2 and a long custom-router prompt at turn 20 are different templates:
    the mixed ratio says 2.0, each template compared with itself says 1.0."""

    def turn(index, mode, tokens):
        d = Decision(
            node="a",
            phase="after_input",
            mode=mode,
            candidates=["b"],
            target="a",
            llm_calls=1,
            input_tokens=tokens,
        )
        return TurnRecord("c", index, "a", "a", "a", ["a"], [d])

    free = PassResult(
        [turn(2, "semantic+model", 100), turn(20, "semantic+model", 100), turn(21, "custom", 300)]
    )
    figures = StrategyResult("ours", free, PassResult()).figures()
    assert figures["router_prompt_growth"] == 2.0
    assert figures["router_prompt_growth_per_template"] == 1.0


def test_real_language_sets_are_valid_and_dev_and_held_out_hardly_share_a_message():
    folder = settings.BASE_DIR / "bench" / "data" / "routing_real"
    for source in ("clinc", "sgd", "crosswoz"):
        dev = load_dataset(folder / f"{source}_dev.jsonl")
        held = load_dataset(folder / f"{source}_heldout.jsonl")
        for conv in [*dev, *held]:
            graph = graph_from_dataset(conv)
            assert all(turn["expect"] in graph.nodes for turn in conv["turns"]), conv["id"]
            assert not any(s.get("examples") for s in conv["scenarios"])  # descriptions only
        assert len(held) >= 20 and sum(len(c["turns"]) for c in held) >= 150
        # Real dialogues repeat their commonest lines ("ok", one CrossWOZ request template): at most 5%.
        seen = {t["user"] for c in dev for t in c["turns"]}
        held_messages = [t["user"] for c in held for t in c["turns"]]
        assert sum(m in seen for m in held_messages) <= 0.05 * len(held_messages), source


def test_an_unknown_or_missing_encoder_is_a_clear_error():
    from bench.routing.encoders import load_encoder

    with pytest.raises(ValueError, match="unknown encoder 'bogus'"):
        load_encoder("bogus")


def test_command_writes_json_figures(tmp_path, monkeypatch, capsys):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(GAME, ensure_ascii=False) + "\n")
    out = tmp_path / "f.json"
    monkeypatch.setattr("captain.knowledge.services.retrieval.get_encoder", lambda: KeywordEncoder(["游戏"]))
    monkeypatch.setattr("captain.knowledge.services.retrieval.encoder_available", lambda: True)
    # The command's one model client, over real HTTP: every router question and reply is answered "0".
    with FakeLLMServer(responder=lambda request: text("0")) as server:
        status = main(
            [
                f"--dataset={path}",
                "--strategies=ours,coze",
                f"--base-url={server.base_url}",
                "--model=m",
                f"--json={out}",
                f"--decisions={tmp_path / 'turns.jsonl'}",
                "--quiet",
            ]
        )
    assert status == 0
    printed = capsys.readouterr().out
    assert printed.startswith("dataset d.jsonl: 1 conversations, 2 turns; model m at ")
    assert printed.endswith(f"figures written to {out}\ndecisions written to {tmp_path / 'turns.jsonl'}\n")
    assert server.requests and all(r["model"] == "m" and r["temperature"] == 0 for r in server.requests)
    data = json.loads(out.read_text())
    turns = [json.loads(line) for line in (tmp_path / "turns.jsonl").read_text().splitlines()]
    assert {(t["strategy"], t["pass"]) for t in turns} == {
        ("ours", "free"),
        ("ours", "forced"),
        ("coze", "free"),
        ("coze", "forced"),
    }
    assert turns[0]["decisions"][0]["mode"] == "rule" and turns[0]["got"] == "setup"
    assert data["as-written"]["ours"]["turns"] == 2 and data["as-written"]["ours"]["accuracy"] == 1.0
    assert "coze" in data["as-written"] and "never_switch" in data["as-written"]


def test_command_errors_are_one_line_and_exit_1(tmp_path, capsys):
    assert main([f"--dataset={tmp_path / 'missing.jsonl'}"]) == 1
    assert (
        capsys.readouterr().err
        == f"python -m bench.routing: error: dataset not found: {tmp_path / 'missing.jsonl'}\n"
    )


def test_entry_points_set_up_django_themselves():
    """`python -m bench.<name>` in a fresh interpreter: Django set up from config.settings as manage.py does, the
    options parsed, and a wrong one refused before any model, database or Redis is started."""
    result = subprocess.run(
        [sys.executable, "-m", "bench.knowledge", "--sets", "nope"],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1, result.stderr
    assert result.stderr.endswith(
        f"error: set not found: {settings.BASE_DIR / 'bench/knowledge/data/nope'}\n"
    )


def test_tool_mode_in_the_benchmark_asks_the_nodes_own_model_with_handoff_tools():
    from bench.routing.tool_decider import make_tool_decider
    from captain.runtime import OpenAIChatModel
    from captain.runtime.routing import DecisionRequest
    from tests.captain.routing.support import game_graph
    from tests.support.fake_llm_server import tool_call

    graph = game_graph(assistant={"mode": "tool"})
    with FakeLLMServer([tool_call("handoff_to_setup", {}), tool_call("handoff_to_vote", {})]) as server:
        decide = make_tool_decider(OpenAIChatModel.for_endpoint(server.base_url, timeout=5), "m")
        request = DecisionRequest(graph, "assistant", "开始游戏", [], "after_input")
        chosen, refused = decide(request), decide(request)
    assert (chosen.mode, chosen.target, chosen.parsed, chosen.llm_calls) == ("tool", "setup", "setup", 1)
    assert chosen.reason == "handoff tool handoff_to_setup" and chosen.input_tokens > 0
    # vote is a node, but not a candidate of the guide: refused, the node stays.
    assert (refused.target, refused.parsed, refused.refused) == ("assistant", "vote", True)
    body = server.requests[0]
    assert body["temperature"] == 0 and "tool_choice" not in body and "max_tokens" not in body
    assert [t["function"]["name"] for t in body["tools"]] == ["handoff_to_setup", "handoff_to_human"]


def test_two_topic_sets_are_valid_and_their_second_topics_are_on_other_nodes():
    folder = settings.BASE_DIR / "bench" / "data" / "routing_real"
    dev = load_dataset(folder / "multi_dev.jsonl")
    held = load_dataset(folder / "multi_heldout.jsonl")
    for convs in (dev, held):
        multi = []
        for conv in convs:
            graph = graph_from_dataset(conv)
            assert not any(s.get("examples") for s in conv["scenarios"])  # descriptions only
            for turn in conv["turns"]:
                assert turn["expect"] in graph.nodes, conv["id"]
                if "multi" in turn:
                    multi.append(turn)
                    assert all(node in graph.nodes for node in turn["multi"]), conv["id"]
                    assert len(set(turn["multi"])) >= 2 and turn["expect"] == turn["multi"][0], conv["id"]
        assert len(multi) >= 60
        # Joined CLINC queries are marked and a minority: most two-topic turns are real ones.
        assert sum(bool(t.get("joined")) for t in multi) < len(multi) / 3
    seen = {t["user"] for c in dev for t in c["turns"]}
    held_messages = [t["user"] for c in held for t in c["turns"]]
    assert sum(m in seen for m in held_messages) <= 0.05 * len(held_messages)
    dialogues = {c["source"]["id"] for c in dev if c["source"]["dataset"] != "clinc150"}
    assert not dialogues & {c["source"]["id"] for c in held if c["source"]["dataset"] != "clinc150"}
