"""The routing benchmark (no Django): replay labelled conversations through each strategy and score them.

Run by `python -m bench.routing` (`cli`: the command line, the one module used with Django set up, for the
product's encoder). `dataset` reads the JSON Lines files of `bench/data/`, `harness` replays them (free-running
and teacher-forced), `figures` scores and prints, `coze` is the baseline (a replica of the router Coze ran in
seed 000) and `tool_decider` plays mode `tool` outside the Runner.
"""
