"""Every pure statistic of the service, standard library only: per-metric summaries and paired
comparisons (`scores`), clustered error bars and power (`error_bars`), judge-people agreement
(`agreement`) and pairwise judging with Bradley-Terry (`pairwise`). Imports nothing of the
service but `core`."""
