"""The routing benchmark (no Django): replay labelled conversations through each strategy and score them.

Used by `python manage.py captain_bench_routing`. `dataset` reads the JSON Lines files of `bench/data/`,
`harness` replays them (free-running and teacher-forced), `figures` scores and prints, `coze` is the baseline
(a replica of the router Coze ran in seed 000) and `tool_decider` plays mode `tool` outside the Runner.
"""
