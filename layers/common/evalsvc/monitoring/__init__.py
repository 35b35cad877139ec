"""The monitor feature's own rules (E8): when a monitor runs (`schedules`), where its webhook
may post and how the body is signed (`webhook_targets`), and the posting itself (`webhooks`).
The use cases are `logic.monitors`, `logic.monitor_alerts` and the `monitor_run` job kind."""
