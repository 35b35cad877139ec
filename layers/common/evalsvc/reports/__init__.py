"""The HTML reports (E4): one self-contained page per evaluation result, comparison, pairwise
judging (E5) or monitor (E8).

Pages are Jinja2 templates (templates/) with autoescaping on: every text from a tenant or a
model reaches the page escaped, and the templates never mark one safe. The page makes no
request: its CSS is inline (allowed by its hash in the Content-Security-Policy, which forbids
everything else), its charts are inline SVG, and it has no script.

    evaluation_page   render_evaluation: GET /evaluation/{id}/report
    comparison_page   render_comparison: GET /compare/report
    pairwise_page     render_pairwise: a pairwise judging (E5), from GET /pairwise/{id}'s body
    monitor_page      render_monitor: GET /monitors/{id}/report (E8), a monitor's runs
    pages             the Jinja2 environment, the stylesheet and its policy, drawing a page
                      until it fits
    limits            how much of each kind of text a page shows
    conversation      what a pair's conversation and tool calls draw (E11): the messages
                      shown open and closed, the rows of calls side by side
    filters           how figures and texts are written on a page
    charts            where each mark of a chart goes

This package's own module imports nothing: what a route needs it imports by name, so that
nothing pulls Jinja2 in or compiles a template but the report routes (which compile their page
at import, for a SnapStart snapshot to hold it).
"""
