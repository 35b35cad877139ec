"""The commands of `evalsvc`, a module per group, each with the parsers of its commands
(`add_parsers`, called by cli.build_parser in the order `evalsvc --help` lists them):

    operator.py   serve, keys, tenants, synthetic: the operator's, against DynamoDB
    data.py       push, metrics: the user's data sent to the service
    evaluate.py   evaluate, rerun
    compare.py    compare, plan
    pairwise.py   pairwise
    report.py     report
    monitors.py   monitors create|list|delete|history, and monitor_runs.py: monitors run

The user's commands talk to any deployment over HTTP (client.py) and share common.py (the
client, Ctrl-C, the service flags) and polling.py (the one retry helper, and following queued
work with its progress)."""
