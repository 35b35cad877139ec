"""The tables the user's commands draw with rich, a module per kind of result: an evaluation
result's, per metric, with what produced it (evaluation.py: `evalsvc evaluate`, `evalsvc
rerun`), a comparison's, per metric with the pairs that regressed most, and a plan's
(comparison.py: `evalsvc compare`, `evalsvc plan`), pairwise judging's leaderboard and
matchups (pairwise.py: `evalsvc pairwise`), and monitors' lists, runs and histories
(monitors.py: `evalsvc monitors`); and how a figure is written in them (figures.py). rich is
imported when a table is drawn.

Every value the service gave reaches the console as a rich `Text` of terminal-safe text
(terminal.cut): never as markup, which rich would read (`[link=…]` makes a terminal link), and
never with a control character, which rich passes on (ESC starts every escape sequence)."""
