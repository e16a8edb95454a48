"""Build the real-language routing sets (routing_real/*.jsonl) from public intent and dialogue data sets.

Customer messages are never written here: every `user` text (and every `assistant` text) is copied from a
source. The help desks (assistant + scenarios, no example phrases) are hand-written in desks.py from the
sources' intent, service and domain names only. Deterministic: fixed seed, sorted inputs, standard library.

This file is the command line; one module per source builds its files (clinc.py, sgd.py, crosswoz.py) on the
shared records, labelling, picks and writing of common.py.

Fetch the sources (raw files stay out of git, e.g. under /tmp/rr):
- CLINC150 (CC BY 3.0): https://github.com/clinc/oos-eval, `data/data_full.json` and `data/domains.json`.
- Schema-Guided Dialogue (CC BY-SA 4.0): https://github.com/google-research-datasets/dstc8-schema-guided-dialogue,
  the `dev/dialogues_*.json` and `test/dialogues_*.json` files.
- CrossWOZ (Apache-2.0): https://github.com/thu-coai/CrossWOZ, `data/crosswoz/val.json.zip` and
  `test.json.zip`, unzipped.

Run (from the repository root):
    python bench/data/routing_real/build.py clinc /tmp/rr/clinc/data_full.json /tmp/rr/clinc/domains.json
    python bench/data/routing_real/build.py sgd /tmp/rr/sgd/dev /tmp/rr/sgd/test
    python bench/data/routing_real/build.py crosswoz /tmp/rr/crosswoz/val.json /tmp/rr/crosswoz/test.json
    python bench/data/routing_real/build.py multi /tmp/rr/crosswoz/val.json /tmp/rr/crosswoz/test.json \
        /tmp/rr/sgd/dev /tmp/rr/sgd/test /tmp/rr/clinc/data_full.json
(`multi` reads the six files above to leave their dialogues out: build it last.)

Labels (`expect` = the node in charge AFTER the message; every conversation starts with triage in charge):
- A message's topic is a source label (CLINC intent, SGD service, CrossWOZ domain). A topic some scenario of
  the desk `covers` -> that scenario; a topic no scenario covers -> `triage`; no topic -> the previous
  expect (the node in charge keeps it). No source has requests for a person, so there is no `human`.
- CLINC150 (single queries): conversations of 2-6 queries chained within one desk. After a topic query,
  the next is, with probability 1/2, a query of a sibling intent of the same scenario (a stay), else a query
  of another scenario (70%) or an uncovered query (30%: an uncovered intent of the desk's CLINC domain, an
  out-of-scope query, or a question about the assistant such as are_you_a_bot) -> triage. Small-talk intents
  (greeting first, thank_you / yes / no / maybe between, goodbye last) have no topic -> previous expect.
  dev: the `val` + `oos_val` splits; held-out: `test` + `oos_test`, on other desks (other CLINC domains).
- SGD: the topic of a user turn is the service of each frame whose state changed: a new active intent, new
  slot values the user's text spans, or requested slots (a question about that service). If no frame has
  one of those, a frame with any new slot value (e.g. "for two people") counts. No change -> previous
  expect. dev: the dev split (dev services); held-out: the test split, whose desks use test services.
- CrossWOZ: the topic of a user turn is the domain of its non-General dialogue acts; General acts only
  (greet, thank, bye) -> previous expect. A "what is near X" question, annotated Request(<domain of X>,
  周边餐馆|周边酒店|周边景点, ""), has the domain in its slot (餐馆 / 酒店 / 景点) as topic: the customer asks
  for restaurants / hotels / sights. The named place a search goes around is not a topic: the Inform 名称 of
  the domain a Select act names (Select 餐馆 源领域=酒店 + Inform 酒店 名称) or a 周边 Request is about, and a
  name the text puts right before 附近/周边/周围 when the message asks about another domain. Dialogues are
  picked by the domains of their acts as annotated (Select anchors aside), not by the labels, so a fix of a
  labelling rule keeps the same dialogues. dev: the val split (train is not in the stored snapshot);
  held-out: the test split, with a desk that covers other domains.
- Two topics that map to different nodes: `expect` is the first one in the text (by the source's slot spans,
  or the position of an act value, a domain word or, for a CrossWOZ Request, its slot name; else the
  annotation order), and `multi` lists the nodes in text order.
- multi_dev / multi_heldout (multi.py), two-topic messages: dialogues (dev: CrossWOZ val + SGD dev; held-out:
  CrossWOZ test + SGD test, with the same desks as crosswoz_* and sgd_*) not already in those files whose first 10
  user turns have a turn with topics on two nodes (labelled by the rules above), cut after the last such turn so
  that the turns before it are its context; 50 CrossWOZ dialogues per file and up to 30 / 40 SGD ones, seeded.
  Plus joined CLINC150 queries (`joined: true` on the turn): two real queries of two covered scenarios of one
  CLINC desk (dev: val split, dev desks; held-out: test split, held-out desks) joined by " and ", ", also " or
  ". Also, ", one turn alone; `expect` is the first query's scenario, `multi` both. Synthetic (the join is
  ours), counted apart in README.md.
- SGD and CrossWOZ dialogues are cut to their first 10 user turns; the system reply that follows a user turn
  is its `assistant` text (CLINC has none).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from clinc import build_clinc
from crosswoz import build_crosswoz
from multi import build_multi
from sgd import build_sgd


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="source", required=True)
    clinc = sub.add_parser("clinc")
    clinc.add_argument("data_full")
    clinc.add_argument("domains")
    sgd = sub.add_parser("sgd")
    sgd.add_argument("dev_dir")
    sgd.add_argument("test_dir")
    crosswoz = sub.add_parser("crosswoz")
    crosswoz.add_argument("val_json")
    crosswoz.add_argument("test_json")
    multi = sub.add_parser("multi")
    for arg in ("crosswoz_val", "crosswoz_test", "sgd_dev_dir", "sgd_test_dir", "clinc_data_full"):
        multi.add_argument(arg)
    args = parser.parse_args(argv)
    builders: dict[str, Callable[[], None]] = {
        "clinc": lambda: build_clinc(args.data_full, args.domains),
        "sgd": lambda: build_sgd(args.dev_dir, args.test_dir),
        "crosswoz": lambda: build_crosswoz(args.val_json, args.test_json),
        "multi": lambda: build_multi(
            args.crosswoz_val, args.crosswoz_test, args.sgd_dev_dir, args.sgd_test_dir, args.clinc_data_full
        ),
    }
    builders[args.source]()


if __name__ == "__main__":
    main()
