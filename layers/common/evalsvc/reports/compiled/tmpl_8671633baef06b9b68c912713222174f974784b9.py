from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'comparison.html.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    l_0_forest_plot = l_0_wins_ties_losses = l_0_pair_texts = l_0_side_by_side = l_0_changes = missing
    try:
        t_1 = environment.filters['cut']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'cut' found.")
    try:
        t_2 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
    try:
        t_3 = environment.filters['number']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'number' found.")
    try:
        t_4 = environment.filters['signed']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'signed' found.")
    pass
    parent_template = environment.get_template('base.html.j2', 'comparison.html.j2')
    for name, parent_block in parent_template.blocks.items():
        context.blocks.setdefault(name, []).append(parent_block)
    included_template = environment.get_template('charts.html.j2', 'comparison.html.j2')._get_default_module(context)
    l_0_forest_plot = getattr(included_template, 'forest_plot', missing)
    if l_0_forest_plot is missing:
        l_0_forest_plot = undefined(f"the template {included_template.__name__!r} (imported on line 2 in 'comparison.html.j2') does not export the requested name 'forest_plot'", name='forest_plot')
    l_0_wins_ties_losses = getattr(included_template, 'wins_ties_losses', missing)
    if l_0_wins_ties_losses is missing:
        l_0_wins_ties_losses = undefined(f"the template {included_template.__name__!r} (imported on line 2 in 'comparison.html.j2') does not export the requested name 'wins_ties_losses'", name='wins_ties_losses')
    context.vars.update({'forest_plot': l_0_forest_plot, 'wins_ties_losses': l_0_wins_ties_losses})
    context.exported_vars.difference_update(('forest_plot', 'wins_ties_losses'))
    included_template = environment.get_template('pair_text.html.j2', 'comparison.html.j2')._get_default_module(context)
    l_0_pair_texts = getattr(included_template, 'pair_texts', missing)
    if l_0_pair_texts is missing:
        l_0_pair_texts = undefined(f"the template {included_template.__name__!r} (imported on line 3 in 'comparison.html.j2') does not export the requested name 'pair_texts'", name='pair_texts')
    context.vars['pair_texts'] = l_0_pair_texts
    context.exported_vars.discard('pair_texts')
    included_template = environment.get_template('inputs.html.j2', 'comparison.html.j2')._get_default_module(context)
    l_0_side_by_side = getattr(included_template, 'side_by_side', missing)
    if l_0_side_by_side is missing:
        l_0_side_by_side = undefined(f"the template {included_template.__name__!r} (imported on line 4 in 'comparison.html.j2') does not export the requested name 'side_by_side'", name='side_by_side')
    context.vars['side_by_side'] = l_0_side_by_side
    context.exported_vars.discard('side_by_side')
    def macro(l_1_list, l_1_heading, l_1_id):
        t_5 = []
        l_1_body = resolve('body')
        if l_1_list is missing:
            l_1_list = undefined("parameter 'list' was not provided", name='list')
        if l_1_heading is missing:
            l_1_heading = undefined("parameter 'heading' was not provided", name='heading')
        if l_1_id is missing:
            l_1_id = undefined("parameter 'id' was not provided", name='id')
        pass
        t_5.extend((
            '<section aria-labelledby="',
            escape(environment.finalize(l_1_id)),
            '-h">\n<h2 id="',
            escape(environment.finalize(l_1_id)),
            '-h">',
            escape(environment.finalize(l_1_heading)),
            ' (',
            escape(environment.finalize(t_2(l_1_list))),
            ')</h2>\n',
        ))
        if (not l_1_list):
            pass
            t_5.extend((
                '<p class="note">No pair moved by ',
                escape(environment.finalize(environment.getattr((undefined(name='body') if l_1_body is missing else l_1_body), 'regression_threshold'))),
                ' or more in this direction.</p>\n',
            ))
        for l_2_c in l_1_list:
            l_2_comparison = resolve('comparison')
            l_2_moved_texts = resolve('moved_texts')
            l_2_short = resolve('short')
            l_2_limits = resolve('limits')
            l_2_missing = resolve('missing')
            l_2_metric = l_2_texts = missing
            _loop_vars = {}
            pass
            l_2_metric = environment.getattr(environment.getitem(environment.getattr((undefined(name='comparison') if l_2_comparison is missing else l_2_comparison), 'metrics'), environment.getattr(l_2_c, 'metric')), 'metric')
            _loop_vars['metric'] = l_2_metric
            l_2_texts = context.call(environment.getattr((undefined(name='moved_texts') if l_2_moved_texts is missing else l_2_moved_texts), 'get'), environment.getattr(l_2_c, 'pair_id'), _loop_vars=_loop_vars)
            _loop_vars['texts'] = l_2_texts
            t_5.extend((
                '<article class="pair" aria-label="pair ',
                escape(environment.finalize(environment.getattr(l_2_c, 'pair_id'))),
                ', metric ',
                escape(environment.finalize((environment.getattr(l_2_c, 'metric') + 1))),
                '">\n<div class="pair-head"><span>Pair <span class="id">',
                escape(environment.finalize(environment.getattr(l_2_c, 'pair_id'))),
                '</span></span><span>metric ',
                escape(environment.finalize((environment.getattr(l_2_c, 'metric') + 1))),
                ': ',
                escape(environment.finalize(context.call((undefined(name='short') if l_2_short is missing else l_2_short), environment.getattr((undefined(name='metric') if l_2_metric is missing else l_2_metric), 'definition'), 80, _loop_vars=_loop_vars))),
                '</span><span>',
                escape(environment.finalize(t_3(environment.getattr(l_2_c, 'baseline_score')))),
                ' → ',
                escape(environment.finalize(t_3(environment.getattr(l_2_c, 'candidate_score')))),
                ' (<strong>',
                escape(environment.finalize(t_4(environment.getattr(l_2_c, 'diff')))),
                '</strong>)</span></div>\n<div class="side">\n<div>\n<h3>Baseline</h3>\n<div class="label">Reason</div>\n<div class="text">',
                escape(environment.finalize((t_1(environment.getattr(l_2_c, 'baseline_reason'), environment.getattr((undefined(name='limits') if l_2_limits is missing else l_2_limits), 'reason')) if environment.getattr(l_2_c, 'baseline_reason') else '(none given)'))),
                '</div>\n',
                escape(environment.finalize(context.call((undefined(name='pair_texts') if l_0_pair_texts is missing else l_0_pair_texts), (environment.getattr((undefined(name='texts') if l_2_texts is missing else l_2_texts), 'baseline') if (undefined(name='texts') if l_2_texts is missing else l_2_texts) else (undefined(name='missing') if l_2_missing is missing else l_2_missing)), (undefined(name='limits') if l_2_limits is missing else l_2_limits), 'Baseline output', _loop_vars=_loop_vars))),
                '\n</div>\n<div>\n<h3>Candidate</h3>\n<div class="label">Reason</div>\n<div class="text">',
                escape(environment.finalize((t_1(environment.getattr(l_2_c, 'candidate_reason'), environment.getattr((undefined(name='limits') if l_2_limits is missing else l_2_limits), 'reason')) if environment.getattr(l_2_c, 'candidate_reason') else '(none given)'))),
                '</div>\n',
                escape(environment.finalize(context.call((undefined(name='pair_texts') if l_0_pair_texts is missing else l_0_pair_texts), (environment.getattr((undefined(name='texts') if l_2_texts is missing else l_2_texts), 'candidate') if (undefined(name='texts') if l_2_texts is missing else l_2_texts) else (undefined(name='missing') if l_2_missing is missing else l_2_missing)), (undefined(name='limits') if l_2_limits is missing else l_2_limits), 'Candidate output', _loop_vars=_loop_vars))),
                '\n</div>\n</div>\n</article>\n',
            ))
        l_2_c = l_2_comparison = l_2_metric = l_2_moved_texts = l_2_texts = l_2_short = l_2_limits = l_2_missing = missing
        t_5.append(
            '</section>\n',
        )
        return concat(t_5)
    context.exported_vars.add('changes')
    context.vars['changes'] = l_0_changes = Macro(environment, macro, 'changes', ('list', 'heading', 'id'), False, False, False, context.eval_ctx.autoescape)
    yield from parent_template.root_render_func(context)

def block_title(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_body = resolve('body')
    pass
    yield 'Comparison '
    yield escape(environment.finalize(environment.getattr((undefined(name='body') if l_0_body is missing else l_0_body), 'baseline_id')))
    yield ' → '
    yield escape(environment.finalize(environment.getattr((undefined(name='body') if l_0_body is missing else l_0_body), 'candidate_id')))
    yield ' — report'

def block_header(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_body = resolve('body')
    pass
    yield '<h1>Comparison report</h1>\n<p class="sub">Baseline <strong>'
    yield escape(environment.finalize(environment.getattr((undefined(name='body') if l_0_body is missing else l_0_body), 'baseline_id')))
    yield '</strong> → candidate <strong>'
    yield escape(environment.finalize(environment.getattr((undefined(name='body') if l_0_body is missing else l_0_body), 'candidate_id')))
    yield '</strong></p>\n'

def block_main(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_report = resolve('report')
    l_0_comparison = resolve('comparison')
    l_0_body = resolve('body')
    l_0_cluster_words = resolve('cluster_words')
    l_0_side_by_side = resolve('side_by_side')
    l_0_baseline_inputs = resolve('baseline_inputs')
    l_0_candidate_inputs = resolve('candidate_inputs')
    l_0_forest_plot = resolve('forest_plot')
    l_0_forest = resolve('forest')
    l_0_power_percent = resolve('power_percent')
    l_0_wins_ties_losses = resolve('wins_ties_losses')
    l_0_wtl = resolve('wtl')
    l_0_changes = resolve('changes')
    try:
        t_6 = environment.filters['count']
    except KeyError:
        @internalcode
        def t_6(*unused):
            raise TemplateRuntimeError("No filter named 'count' found.")
    try:
        t_3 = environment.filters['number']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'number' found.")
    try:
        t_7 = environment.filters['p_value']
    except KeyError:
        @internalcode
        def t_7(*unused):
            raise TemplateRuntimeError("No filter named 'p_value' found.")
    try:
        t_4 = environment.filters['signed']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'signed' found.")
    try:
        t_8 = environment.filters['usd']
    except KeyError:
        @internalcode
        def t_8(*unused):
            raise TemplateRuntimeError("No filter named 'usd' found.")
    try:
        t_9 = environment.filters['when']
    except KeyError:
        @internalcode
        def t_9(*unused):
            raise TemplateRuntimeError("No filter named 'when' found.")
    try:
        t_10 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_10(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    yield '<section aria-labelledby="what-h">\n<h2 id="what-h">What was compared</h2>\n<table>\n<thead><tr><th scope="col"></th><th scope="col">Baseline</th><th scope="col">Candidate</th></tr></thead>\n<tbody>\n<tr><th scope="row">Result</th><td>'
    yield escape(environment.finalize(environment.getattr(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'baseline'), 'results_id')))
    yield '</td><td>'
    yield escape(environment.finalize(environment.getattr(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'candidate'), 'results_id')))
    yield '</td></tr>\n<tr><th scope="row">Dataset</th><td>'
    yield escape(environment.finalize(environment.getattr(environment.getattr(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'baseline'), 'dataset_kind'), 'value')))
    yield ' '
    yield escape(environment.finalize(environment.getattr(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'baseline'), 'dataset_id')))
    yield '</td><td>'
    yield escape(environment.finalize(environment.getattr(environment.getattr(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'candidate'), 'dataset_kind'), 'value')))
    yield ' '
    yield escape(environment.finalize(environment.getattr(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'candidate'), 'dataset_id')))
    yield '</td></tr>\n<tr><th scope="row">Metrics set</th><td>'
    yield escape(environment.finalize(environment.getattr(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'baseline'), 'metrics_id')))
    yield '</td><td>'
    yield escape(environment.finalize(environment.getattr(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'candidate'), 'metrics_id')))
    yield '</td></tr>\n<tr><th scope="row">Pairs</th><td>'
    yield escape(environment.finalize(t_6(environment.getattr(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'baseline'), 'pair_count'))))
    yield '</td><td>'
    yield escape(environment.finalize(t_6(environment.getattr(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'candidate'), 'pair_count'))))
    yield '</td></tr>\n<tr><th scope="row">Created</th><td>'
    yield escape(environment.finalize(t_9(environment.getattr(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'baseline'), 'created_ms'))))
    yield '</td><td>'
    yield escape(environment.finalize(t_9(environment.getattr(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'candidate'), 'created_ms'))))
    yield '</td></tr>\n<tr><th scope="row">Judge model</th><td>'
    yield escape(environment.finalize((environment.getattr(environment.getattr(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'baseline'), 'usage'), 'model') or 'none')))
    yield '</td><td>'
    yield escape(environment.finalize((environment.getattr(environment.getattr(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'candidate'), 'usage'), 'model') or 'none')))
    yield '</td></tr>\n<tr><th scope="row">Cost</th><td>'
    yield escape(environment.finalize(t_8(environment.getattr(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'baseline'), 'usage'))))
    yield '</td><td>'
    yield escape(environment.finalize(t_8(environment.getattr(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'candidate'), 'usage'))))
    yield '</td></tr>\n</tbody>\n</table>\n<dl class="facts">\n<dt>Pairs matched</dt><dd>'
    yield escape(environment.finalize(t_6(environment.getattr((undefined(name='comparison') if l_0_comparison is missing else l_0_comparison), 'pairs_matched'))))
    yield ' (by pair id); '
    yield escape(environment.finalize(t_6(environment.getattr((undefined(name='comparison') if l_0_comparison is missing else l_0_comparison), 'only_in_baseline'))))
    yield ' only in the baseline, '
    yield escape(environment.finalize(t_6(environment.getattr((undefined(name='comparison') if l_0_comparison is missing else l_0_comparison), 'only_in_candidate'))))
    yield ' only in the candidate</dd>\n<dt>Significance</dt><dd>α = '
    yield escape(environment.finalize(environment.getattr((undefined(name='body') if l_0_body is missing else l_0_body), 'alpha')))
    yield ', '
    yield escape(environment.finalize(('Holm–Bonferroni across the metrics' if (environment.getattr((undefined(name='body') if l_0_body is missing else l_0_body), 'correction') == 'holm') else 'no correction across the metrics')))
    yield '</dd>\n<dt>A pair moved</dt><dd>when its score changed by '
    yield escape(environment.finalize(environment.getattr((undefined(name='body') if l_0_body is missing else l_0_body), 'regression_threshold')))
    yield ' or more</dd>\n'
    if environment.getattr((undefined(name='body') if l_0_body is missing else l_0_body), 'cluster_by'):
        pass
        yield '<dt>Clustered by</dt><dd>'
        yield escape(environment.finalize(environment.getitem((undefined(name='cluster_words') if l_0_cluster_words is missing else l_0_cluster_words), environment.getattr((undefined(name='body') if l_0_body is missing else l_0_body), 'cluster_by'))))
        yield ': pairs of one cluster are not counted as independent in the clustered interval</dd>\n'
    yield '</dl>\n</section>\n\n<section aria-labelledby="inputs-h">\n<h2 id="inputs-h">What produced each result</h2>\n'
    yield escape(environment.finalize(context.call((undefined(name='side_by_side') if l_0_side_by_side is missing else l_0_side_by_side), (undefined(name='baseline_inputs') if l_0_baseline_inputs is missing else l_0_baseline_inputs), (undefined(name='candidate_inputs') if l_0_candidate_inputs is missing else l_0_candidate_inputs), environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'baseline'), environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'candidate'), environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'same_pairs'), _block_vars=_block_vars)))
    yield '\n</section>\n\n<section aria-labelledby="diff-h">\n<h2 id="diff-h">Differences</h2>\n'
    yield escape(environment.finalize(context.call((undefined(name='forest_plot') if l_0_forest_plot is missing else l_0_forest_plot), (undefined(name='forest') if l_0_forest is missing else l_0_forest), 'forest', _block_vars=_block_vars)))
    yield '\n<table>\n<thead><tr><th scope="col">#</th><th scope="col">Metric</th><th scope="col" class="num">Pairs</th><th scope="col" class="num">Baseline</th><th scope="col" class="num">Candidate</th><th scope="col" class="num">Difference</th><th scope="col" class="num">Interval</th>'
    if environment.getattr((undefined(name='body') if l_0_body is missing else l_0_body), 'cluster_by'):
        pass
        yield '<th scope="col" class="num">Clustered interval</th>'
    yield '<th scope="col" class="num">p (adjusted)</th><th scope="col" class="num">Wins / ties / losses</th><th scope="col">Verdict</th></tr></thead>\n<tbody>\n'
    l_1_loop = missing
    for l_1_m, l_1_loop in LoopContext(environment.getattr((undefined(name='comparison') if l_0_comparison is missing else l_0_comparison), 'metrics'), undefined):
        l_1_short = resolve('short')
        l_1_tones = resolve('tones')
        l_1_verdict_words = resolve('verdict_words')
        _loop_vars = {}
        pass
        yield '<tr><th scope="row">'
        yield escape(environment.finalize(environment.getattr(l_1_loop, 'index')))
        yield '</th><td>'
        yield escape(environment.finalize(context.call((undefined(name='short') if l_1_short is missing else l_1_short), environment.getattr(environment.getattr(l_1_m, 'metric'), 'definition'), 120, _loop_vars=_loop_vars)))
        yield '</td><td class="num">'
        yield escape(environment.finalize(t_6(environment.getattr(environment.getattr(l_1_m, 'stats'), 'n'))))
        yield '</td><td class="num">'
        yield escape(environment.finalize(t_3(environment.getattr(l_1_m, 'baseline_mean'))))
        yield '</td><td class="num">'
        yield escape(environment.finalize(t_3(environment.getattr(l_1_m, 'candidate_mean'))))
        yield '</td><td class="num">'
        yield escape(environment.finalize(t_4(environment.getattr(environment.getattr(l_1_m, 'stats'), 'mean_diff'))))
        yield '</td><td class="num">['
        yield escape(environment.finalize(t_4(environment.getattr(environment.getattr(l_1_m, 'stats'), 'ci_low'))))
        yield ', '
        yield escape(environment.finalize(t_4(environment.getattr(environment.getattr(l_1_m, 'stats'), 'ci_high'))))
        yield ']</td>'
        if environment.getattr((undefined(name='body') if l_0_body is missing else l_0_body), 'cluster_by'):
            pass
            yield '<td class="num">'
            if (environment.getattr(l_1_m, 'clustered') and (not t_10(environment.getattr(environment.getattr(l_1_m, 'clustered'), 'se_clustered')))):
                pass
                yield '['
                yield escape(environment.finalize(t_4(environment.getattr(environment.getattr(l_1_m, 'clustered'), 'ci_low_clustered'))))
                yield ', '
                yield escape(environment.finalize(t_4(environment.getattr(environment.getattr(l_1_m, 'clustered'), 'ci_high_clustered'))))
                yield '] ('
                yield escape(environment.finalize(t_6(environment.getattr(environment.getattr(l_1_m, 'clustered'), 'clusters'))))
                yield ' clusters)'
            elif environment.getattr(l_1_m, 'clustered'):
                pass
                yield '— ('
                yield escape(environment.finalize(t_6(environment.getattr(environment.getattr(l_1_m, 'clustered'), 'clusters'))))
                yield ' '
                yield escape(environment.finalize(('cluster' if (environment.getattr(environment.getattr(l_1_m, 'clustered'), 'clusters') == 1) else 'clusters')))
                yield ': 2 needed)'
            else:
                pass
                yield '—'
            yield '</td>'
        yield '<td class="num">'
        yield escape(environment.finalize(t_7(environment.getattr(l_1_m, 'p_adjusted'))))
        yield '</td><td class="num">'
        yield escape(environment.finalize(t_6(environment.getattr(environment.getattr(l_1_m, 'stats'), 'wins'))))
        yield ' / '
        yield escape(environment.finalize(t_6(environment.getattr(environment.getattr(l_1_m, 'stats'), 'ties'))))
        yield ' / '
        yield escape(environment.finalize(t_6(environment.getattr(environment.getattr(l_1_m, 'stats'), 'losses'))))
        yield '</td><td><span class="verdict '
        yield escape(environment.finalize(context.call(environment.getattr((undefined(name='tones') if l_1_tones is missing else l_1_tones), 'get'), environment.getattr(l_1_m, 'verdict'), 'neutral', _loop_vars=_loop_vars)))
        yield '">'
        yield escape(environment.finalize(environment.getitem((undefined(name='verdict_words') if l_1_verdict_words is missing else l_1_verdict_words), environment.getattr(l_1_m, 'verdict'))))
        yield '</span></td></tr>\n'
    l_1_loop = l_1_m = l_1_short = l_1_tones = l_1_verdict_words = missing
    yield '</tbody>\n</table>\n</section>\n\n<section aria-labelledby="power-h">\n<h2 id="power-h">What this comparison could see</h2>\n<p class="note">The smallest difference this comparison could see is the mean difference it had a '
    yield escape(environment.finalize((undefined(name='power_percent') if l_0_power_percent is missing else l_0_power_percent)))
    yield ' % chance to detect at α = '
    yield escape(environment.finalize(environment.getattr((undefined(name='body') if l_0_body is missing else l_0_body), 'alpha')))
    yield ' with its pairs and their spread: a smaller real difference may well have gone unseen. The pairs needed are how many matched pairs a comparison needs to see the difference observed here with '
    yield escape(environment.finalize((undefined(name='power_percent') if l_0_power_percent is missing else l_0_power_percent)))
    yield ' % power (POST /plan plans one for any difference).</p>\n<table>\n<thead><tr><th scope="col">#</th><th scope="col">Metric</th><th scope="col" class="num">Pairs</th><th scope="col" class="num">Difference observed</th><th scope="col" class="num">Smallest difference it could see ('
    yield escape(environment.finalize((undefined(name='power_percent') if l_0_power_percent is missing else l_0_power_percent)))
    yield ' % power)</th><th scope="col" class="num">Pairs needed to see the observed difference</th></tr></thead>\n<tbody>\n'
    l_1_loop = missing
    for l_1_m, l_1_loop in LoopContext(environment.getattr((undefined(name='comparison') if l_0_comparison is missing else l_0_comparison), 'metrics'), undefined):
        l_1_short = resolve('short')
        l_1_pairs_to_see = resolve('pairs_to_see')
        l_1_needed = missing
        _loop_vars = {}
        pass
        yield '<tr><th scope="row">'
        yield escape(environment.finalize(environment.getattr(l_1_loop, 'index')))
        yield '</th><td>'
        yield escape(environment.finalize(context.call((undefined(name='short') if l_1_short is missing else l_1_short), environment.getattr(environment.getattr(l_1_m, 'metric'), 'definition'), 120, _loop_vars=_loop_vars)))
        yield '</td><td class="num">'
        yield escape(environment.finalize(t_6(environment.getattr(environment.getattr(l_1_m, 'stats'), 'n'))))
        yield '</td><td class="num">'
        yield escape(environment.finalize(t_4(environment.getattr(environment.getattr(l_1_m, 'stats'), 'mean_diff'))))
        yield '</td><td class="num">'
        yield escape(environment.finalize(t_3(environment.getattr(l_1_m, 'mde'))))
        yield '</td><td class="num">'
        l_1_needed = environment.getitem((undefined(name='pairs_to_see') if l_1_pairs_to_see is missing else l_1_pairs_to_see), environment.getattr(l_1_loop, 'index0'))
        _loop_vars['needed'] = l_1_needed
        yield escape(environment.finalize((t_6((undefined(name='needed') if l_1_needed is missing else l_1_needed)) if (not t_10((undefined(name='needed') if l_1_needed is missing else l_1_needed))) else '—')))
        yield '</td></tr>\n'
    l_1_loop = l_1_m = l_1_short = l_1_pairs_to_see = l_1_needed = missing
    yield '</tbody>\n</table>\n</section>\n\n<section aria-labelledby="wtl-h">\n<h2 id="wtl-h">Wins, ties and losses</h2>\n'
    yield escape(environment.finalize(context.call((undefined(name='wins_ties_losses') if l_0_wins_ties_losses is missing else l_0_wins_ties_losses), (undefined(name='wtl') if l_0_wtl is missing else l_0_wtl), 'wtl', _block_vars=_block_vars)))
    yield '\n</section>\n\n'
    yield escape(environment.finalize(context.call((undefined(name='changes') if l_0_changes is missing else l_0_changes), environment.getattr((undefined(name='comparison') if l_0_comparison is missing else l_0_comparison), 'regressions'), 'Regressions, side by side', 'regressions', _block_vars=_block_vars)))
    yield '\n'
    yield escape(environment.finalize(context.call((undefined(name='changes') if l_0_changes is missing else l_0_changes), environment.getattr((undefined(name='comparison') if l_0_comparison is missing else l_0_comparison), 'improvements'), 'Improvements, side by side', 'improvements', _block_vars=_block_vars)))
    yield '\n'

blocks = {'title': block_title, 'header': block_header, 'main': block_main}
debug_info = '1=37&2=40&3=49&4=55&10=61&11=73&12=75&13=82&14=86&16=89&17=98&18=100&19=104&20=108&25=120&26=122&31=124&32=126&5=138&6=153&8=163&39=168&45=232&46=236&47=244&48=248&49=252&50=256&51=260&55=264&56=270&57=274&58=276&59=279&66=282&71=284&73=286&75=291&76=298&84=352&86=358&88=361&89=368&97=384&100=386&101=388'