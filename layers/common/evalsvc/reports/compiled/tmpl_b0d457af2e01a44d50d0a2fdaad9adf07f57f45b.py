from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'pairwise.html.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    l_0_forest_plot = l_0_share = l_0_chose = l_0_output_text = missing
    try:
        t_1 = environment.filters['count']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'count' found.")
    try:
        t_2 = environment.filters['cut']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'cut' found.")
    try:
        t_3 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
    try:
        t_4 = environment.filters['percent']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'percent' found.")
    try:
        t_5 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_5(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    parent_template = environment.get_template('base.html.j2', 'pairwise.html.j2')
    for name, parent_block in parent_template.blocks.items():
        context.blocks.setdefault(name, []).append(parent_block)
    included_template = environment.get_template('charts.html.j2', 'pairwise.html.j2')._get_default_module(context)
    l_0_forest_plot = getattr(included_template, 'forest_plot', missing)
    if l_0_forest_plot is missing:
        l_0_forest_plot = undefined(f"the template {included_template.__name__!r} (imported on line 2 in 'pairwise.html.j2') does not export the requested name 'forest_plot'", name='forest_plot')
    context.vars['forest_plot'] = l_0_forest_plot
    context.exported_vars.discard('forest_plot')
    def macro(l_1_part, l_1_whole):
        t_6 = []
        if l_1_part is missing:
            l_1_part = undefined("parameter 'part' was not provided", name='part')
        if l_1_whole is missing:
            l_1_whole = undefined("parameter 'whole' was not provided", name='whole')
        pass
        if l_1_whole:
            pass
            t_6.extend((
                ' (',
                escape(environment.finalize(t_4((l_1_part / l_1_whole)))),
                ')',
            ))
        return concat(t_6)
    context.exported_vars.add('share')
    context.vars['share'] = l_0_share = Macro(environment, macro, 'share', ('part', 'whole'), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_run, l_1_winner):
        t_7 = []
        if l_1_run is missing:
            l_1_run = undefined("parameter 'run' was not provided", name='run')
        if l_1_winner is missing:
            l_1_winner = undefined("parameter 'winner' was not provided", name='winner')
        pass
        if t_5(l_1_run):
            pass
            t_7.append(
                'Called it <strong>a tie</strong>',
            )
        else:
            pass
            t_7.extend((
                'Chose the output shown ',
                escape(environment.finalize(l_1_winner)),
                ': <strong>',
                escape(environment.finalize(l_1_run)),
                '</strong>',
            ))
        return concat(t_7)
    context.exported_vars.add('chose')
    context.vars['chose'] = l_0_chose = Macro(environment, macro, 'chose', ('run', 'winner'), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_label, l_1_text):
        t_8 = []
        l_1_limits = resolve('limits')
        if l_1_label is missing:
            l_1_label = undefined("parameter 'label' was not provided", name='label')
        if l_1_text is missing:
            l_1_text = undefined("parameter 'text' was not provided", name='text')
        pass
        if t_5(l_1_text):
            pass
            t_8.extend((
                '<div class="label">',
                escape(environment.finalize(l_1_label)),
                '</div>\n<p class="note">Not shown: this text was not read for the page.</p>\n',
            ))
        else:
            pass
            t_8.extend((
                '<div class="label">',
                escape(environment.finalize(l_1_label)),
                ' (',
                escape(environment.finalize(t_1(t_3(l_1_text)))),
                ' characters)</div>\n<div class="text">',
                escape(environment.finalize(t_2(l_1_text, environment.getattr((undefined(name='limits') if l_1_limits is missing else l_1_limits), 'pair_text')))),
                '</div>\n',
            ))
        return concat(t_8)
    context.exported_vars.add('output_text')
    context.vars['output_text'] = l_0_output_text = Macro(environment, macro, 'output_text', ('label', 'text'), False, False, False, context.eval_ctx.autoescape)
    yield from parent_template.root_render_func(context)

def block_title(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_report = resolve('report')
    pass
    yield 'Pairwise judging '
    yield escape(environment.finalize(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'pairwise_id')))
    yield ' — report'

def block_header(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_report = resolve('report')
    try:
        t_3 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
    pass
    yield '<h1>Pairwise report</h1>\n<p class="sub">Pairwise judging <strong>'
    yield escape(environment.finalize(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'pairwise_id')))
    yield '</strong> of '
    yield escape(environment.finalize(t_3(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'result_ids'))))
    yield ' runs · <span class="status '
    yield escape(environment.finalize(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'status')))
    yield '">'
    yield escape(environment.finalize(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'status')))
    yield '</span></p>\n'

def block_main(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_report = resolve('report')
    l_0_limits = resolve('limits')
    l_0_matchup_count = resolve('matchup_count')
    l_0_usage = resolve('usage')
    l_0_forest = resolve('forest')
    l_0_forest_plot = resolve('forest_plot')
    l_0_p = resolve('p')
    l_0_share = resolve('share')
    l_0_h = resolve('h')
    l_0_listed = resolve('listed')
    l_0_done = l_0_total = missing
    try:
        t_1 = environment.filters['count']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'count' found.")
    try:
        t_2 = environment.filters['cut']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'cut' found.")
    try:
        t_9 = environment.filters['int']
    except KeyError:
        @internalcode
        def t_9(*unused):
            raise TemplateRuntimeError("No filter named 'int' found.")
    try:
        t_3 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
    try:
        t_10 = environment.filters['max']
    except KeyError:
        @internalcode
        def t_10(*unused):
            raise TemplateRuntimeError("No filter named 'max' found.")
    try:
        t_11 = environment.filters['number']
    except KeyError:
        @internalcode
        def t_11(*unused):
            raise TemplateRuntimeError("No filter named 'number' found.")
    try:
        t_12 = environment.filters['p_value']
    except KeyError:
        @internalcode
        def t_12(*unused):
            raise TemplateRuntimeError("No filter named 'p_value' found.")
    try:
        t_4 = environment.filters['percent']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'percent' found.")
    try:
        t_13 = environment.filters['round']
    except KeyError:
        @internalcode
        def t_13(*unused):
            raise TemplateRuntimeError("No filter named 'round' found.")
    try:
        t_14 = environment.filters['signed']
    except KeyError:
        @internalcode
        def t_14(*unused):
            raise TemplateRuntimeError("No filter named 'signed' found.")
    try:
        t_15 = environment.filters['usd']
    except KeyError:
        @internalcode
        def t_15(*unused):
            raise TemplateRuntimeError("No filter named 'usd' found.")
    try:
        t_5 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_5(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    l_0_done = environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'progress_done')
    _block_vars['done'] = l_0_done
    l_0_total = environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'progress_total')
    _block_vars['total'] = l_0_total
    if (environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'status') == 'running'):
        pass
        yield '<section class="banner running" aria-labelledby="progress-h">\n<h2 id="progress-h">Still running</h2>\n<p>'
        yield escape(environment.finalize(t_1((undefined(name='done') if l_0_done is missing else l_0_done))))
        yield ' of '
        yield escape(environment.finalize(t_1((undefined(name='total') if l_0_total is missing else l_0_total))))
        yield ' pairs judged'
        if (undefined(name='total') if l_0_total is missing else l_0_total):
            pass
            yield ' ('
            yield escape(environment.finalize(t_9(t_13(((100 * (undefined(name='done') if l_0_done is missing else l_0_done)) / (undefined(name='total') if l_0_total is missing else l_0_total)), 0))))
            yield ' %)'
        yield '. The leaderboard and the matchups appear once every comparison is judged; ask for this page again later.</p>\n<progress value="'
        yield escape(environment.finalize((undefined(name='done') if l_0_done is missing else l_0_done)))
        yield '" max="'
        yield escape(environment.finalize(t_10(environment, [(undefined(name='total') if l_0_total is missing else l_0_total), 1])))
        yield '" aria-labelledby="progress-h">'
        yield escape(environment.finalize((undefined(name='done') if l_0_done is missing else l_0_done)))
        yield ' of '
        yield escape(environment.finalize((undefined(name='total') if l_0_total is missing else l_0_total)))
        yield '</progress>\n</section>\n'
    elif (environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'status') == 'failed'):
        pass
        yield '<section class="banner failed" aria-labelledby="failure-h">\n<h2 id="failure-h">This pairwise judging failed</h2>\n<p>'
        yield escape(environment.finalize((t_2(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'failure'), environment.getattr((undefined(name='limits') if l_0_limits is missing else l_0_limits), 'failure')) if environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'failure') else 'No reason was recorded.')))
        yield '</p>\n<p>'
        yield escape(environment.finalize(t_1((undefined(name='done') if l_0_done is missing else l_0_done))))
        yield ' of '
        yield escape(environment.finalize(t_1((undefined(name='total') if l_0_total is missing else l_0_total))))
        yield ' pairs had been judged. Ask for a pairwise judging again (POST /pairwise) to get a result.</p>\n</section>\n'
    yield '\n<section aria-labelledby="run-h">\n<h2 id="run-h">What was run</h2>\n<dl class="facts">\n<dt>Question</dt><dd><div class="text">'
    yield escape(environment.finalize(t_2(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'question'), environment.getattr((undefined(name='limits') if l_0_limits is missing else l_0_limits), 'definition'))))
    yield '</div></dd>\n<dt>Runs</dt><dd>'
    yield escape(environment.finalize(t_3(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'result_ids'))))
    yield ' evaluation results, in the order given:\n<ul>\n'
    for l_1_r in environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'result_ids'):
        _loop_vars = {}
        pass
        yield '<li>'
        yield escape(environment.finalize(l_1_r))
        yield '</li>\n'
    l_1_r = missing
    yield '</ul></dd>\n<dt>Pairs used</dt><dd>'
    yield escape(environment.finalize(t_1(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'pairs_used'))))
    yield ' (pair ids present in every run)</dd>\n<dt>Both orders</dt><dd>'
    if environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'both_orders'):
        pass
        yield "yes: every comparison judged twice, each run's output shown first once"
    else:
        pass
        yield 'no: every comparison judged once, the output of the run given first shown first'
    yield '</dd>\n<dt>Significance</dt><dd>α = '
    yield escape(environment.finalize(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'alpha')))
    yield ', Holm–Bonferroni across the '
    yield escape(environment.finalize((undefined(name='matchup_count') if l_0_matchup_count is missing else l_0_matchup_count)))
    yield ' matchup'
    yield escape(environment.finalize(('s' if ((undefined(name='matchup_count') if l_0_matchup_count is missing else l_0_matchup_count) != 1) else '')))
    yield ' (one per two runs)</dd>\n<dt>Judge model</dt><dd>'
    yield escape(environment.finalize((environment.getattr((undefined(name='usage') if l_0_usage is missing else l_0_usage), 'model') or 'none (no judge call)')))
    yield '</dd>\n<dt>Judge calls</dt><dd>'
    yield escape(environment.finalize(t_1(environment.getattr((undefined(name='usage') if l_0_usage is missing else l_0_usage), 'llm_calls'))))
    yield ' calls, '
    yield escape(environment.finalize(t_1(environment.getattr((undefined(name='usage') if l_0_usage is missing else l_0_usage), 'cache_hits'))))
    yield ' answered from the cache</dd>\n<dt>Tokens</dt><dd>'
    yield escape(environment.finalize(t_1(environment.getattr((undefined(name='usage') if l_0_usage is missing else l_0_usage), 'input_tokens'))))
    yield ' in, '
    yield escape(environment.finalize(t_1(environment.getattr((undefined(name='usage') if l_0_usage is missing else l_0_usage), 'output_tokens'))))
    yield ' out</dd>\n<dt>Cost</dt><dd>'
    yield escape(environment.finalize(t_15((undefined(name='usage') if l_0_usage is missing else l_0_usage))))
    yield '</dd>\n</dl>\n</section>\n\n'
    if environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'leaderboard'):
        pass
        yield '<section aria-labelledby="board-h">\n<h2 id="board-h">Leaderboard</h2>\n<p>Runs ranked by their Bradley–Terry strength, fitted to every comparison (a tie counts half a win to each side). Strengths are on a natural log scale with mean 0: between two runs whose strengths differ by 1, the stronger is expected to win 73 % of their decided comparisons (e¹ ≈ 2.7 wins per loss). Intervals that overlap do not show that the runs differ: the matchups below test each two.</p>\n'
        if (undefined(name='forest') if l_0_forest is missing else l_0_forest):
            pass
            yield escape(environment.finalize(context.call((undefined(name='forest_plot') if l_0_forest_plot is missing else l_0_forest_plot), (undefined(name='forest') if l_0_forest is missing else l_0_forest), 'forest', _block_vars=_block_vars)))
        yield '<table>\n<caption class="note">Rank 1 is best; strengths with their 95 % intervals; wins, losses and ties over every comparison a run took part in.</caption>\n<thead><tr><th scope="col" class="num">Rank</th><th scope="col">Run</th><th scope="col" class="num">Strength</th><th scope="col" class="num">Interval</th><th scope="col" class="num">Wins</th><th scope="col" class="num">Losses</th><th scope="col" class="num">Ties</th></tr></thead>\n<tbody>\n'
        for l_1_r in environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'leaderboard'):
            _loop_vars = {}
            pass
            yield '<tr><th scope="row" class="num">'
            yield escape(environment.finalize(environment.getattr(l_1_r, 'rank')))
            yield '</th><td>'
            yield escape(environment.finalize(environment.getattr(l_1_r, 'result_id')))
            yield '</td><td class="num">'
            yield escape(environment.finalize(t_14(environment.getattr(l_1_r, 'strength'))))
            yield '</td><td class="num">['
            yield escape(environment.finalize(t_14(environment.getattr(l_1_r, 'ci_low'))))
            yield ', '
            yield escape(environment.finalize(t_14(environment.getattr(l_1_r, 'ci_high'))))
            yield ']</td><td class="num">'
            yield escape(environment.finalize(t_1(environment.getattr(l_1_r, 'wins'))))
            yield '</td><td class="num">'
            yield escape(environment.finalize(t_1(environment.getattr(l_1_r, 'losses'))))
            yield '</td><td class="num">'
            yield escape(environment.finalize(t_1(environment.getattr(l_1_r, 'ties'))))
            yield '</td></tr>\n'
        l_1_r = missing
        yield '</tbody>\n</table>\n</section>\n'
    yield '\n'
    if environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'matchups'):
        pass
        yield '<section aria-labelledby="matchups-h">\n<h2 id="matchups-h">Matchups</h2>\n<table>\n<caption class="note">One row per two runs: the comparisons each won and the ties; a\'s share of the decided comparisons (ties aside) with its Wilson 95 % interval; the exact two-sided sign test and its Holm adjustment over the '
        yield escape(environment.finalize(t_3(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'matchups'))))
        yield ' matchup'
        yield escape(environment.finalize(('s' if (t_3(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'matchups')) != 1) else '')))
        yield '. A run is better when the adjusted p is under α = '
        yield escape(environment.finalize(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'alpha')))
        yield '. A dash: every comparison was a tie.</caption>\n<thead><tr><th scope="col">#</th><th scope="col">Run a</th><th scope="col">Run b</th><th scope="col" class="num">a wins</th><th scope="col" class="num">b wins</th><th scope="col" class="num">Ties</th><th scope="col" class="num">Win rate of a</th><th scope="col" class="num">Interval</th><th scope="col" class="num">p</th><th scope="col" class="num">p adjusted</th><th scope="col">Verdict</th></tr></thead>\n<tbody>\n'
        l_1_loop = missing
        for l_1_m, l_1_loop in LoopContext(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'matchups'), undefined):
            l_1_short = resolve('short')
            _loop_vars = {}
            pass
            yield '<tr><th scope="row">'
            yield escape(environment.finalize(environment.getattr(l_1_loop, 'index')))
            yield '</th><td>'
            yield escape(environment.finalize(environment.getattr(l_1_m, 'a')))
            yield '</td><td>'
            yield escape(environment.finalize(environment.getattr(l_1_m, 'b')))
            yield '</td><td class="num">'
            yield escape(environment.finalize(t_1(environment.getattr(l_1_m, 'a_wins'))))
            yield '</td><td class="num">'
            yield escape(environment.finalize(t_1(environment.getattr(l_1_m, 'b_wins'))))
            yield '</td><td class="num">'
            yield escape(environment.finalize(t_1(environment.getattr(l_1_m, 'ties'))))
            yield '</td><td class="num">'
            yield escape(environment.finalize(t_4(environment.getattr(l_1_m, 'win_rate'))))
            yield '</td><td class="num">'
            if ((not t_5(environment.getattr(l_1_m, 'ci_low'))) and (not t_5(environment.getattr(l_1_m, 'ci_high')))):
                pass
                yield '['
                yield escape(environment.finalize(t_4(environment.getattr(l_1_m, 'ci_low'))))
                yield ', '
                yield escape(environment.finalize(t_4(environment.getattr(l_1_m, 'ci_high'))))
                yield ']'
            else:
                pass
                yield '—'
            yield '</td><td class="num">'
            yield escape(environment.finalize(t_12(environment.getattr(l_1_m, 'p_value'))))
            yield '</td><td class="num">'
            yield escape(environment.finalize(t_12(environment.getattr(l_1_m, 'p_adjusted'))))
            yield '</td><td>'
            if (environment.getattr(l_1_m, 'verdict') == 'a_better'):
                pass
                yield '<span class="verdict better">a better: '
                yield escape(environment.finalize(context.call((undefined(name='short') if l_1_short is missing else l_1_short), environment.getattr(l_1_m, 'a'), 40, _loop_vars=_loop_vars)))
                yield '</span>'
            elif (environment.getattr(l_1_m, 'verdict') == 'b_better'):
                pass
                yield '<span class="verdict better">b better: '
                yield escape(environment.finalize(context.call((undefined(name='short') if l_1_short is missing else l_1_short), environment.getattr(l_1_m, 'b'), 40, _loop_vars=_loop_vars)))
                yield '</span>'
            else:
                pass
                yield '<span class="verdict neutral">no significant difference</span>'
            yield '</td></tr>\n'
        l_1_loop = l_1_m = l_1_short = missing
        yield '</tbody>\n</table>\n</section>\n'
    yield '\n'
    if environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'position'):
        pass
        l_0_p = environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'position')
        _block_vars['p'] = l_0_p
        yield '<section aria-labelledby="position-h">\n<h2 id="position-h">Position consistency</h2>\n<p>A judge with a first-position bias chooses whichever output it is shown first more often than the one shown second, so that “first chosen” stands well above “second chosen” and, judged in both orders, a comparison\'s two orders pick different runs and the consistency falls below 100 %.'
        if environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'both_orders'):
            pass
            yield ' Judging both orders cancels the bias: a comparison whose orders disagree counts as a tie.'
        yield '</p>\n<table>\n<thead><tr><th scope="col" class="num">Judgements</th><th scope="col" class="num">First chosen</th><th scope="col" class="num">Second chosen</th><th scope="col" class="num">Ties</th><th scope="col" class="num">Consistency</th></tr></thead>\n<tbody>\n<tr><td class="num">'
        yield escape(environment.finalize(t_1(environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'judgements'))))
        yield '</td><td class="num">'
        yield escape(environment.finalize(t_1(environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'first_chosen'))))
        yield escape(environment.finalize(context.call((undefined(name='share') if l_0_share is missing else l_0_share), environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'first_chosen'), environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'judgements'), _block_vars=_block_vars)))
        yield '</td><td class="num">'
        yield escape(environment.finalize(t_1(environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'second_chosen'))))
        yield escape(environment.finalize(context.call((undefined(name='share') if l_0_share is missing else l_0_share), environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'second_chosen'), environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'judgements'), _block_vars=_block_vars)))
        yield '</td><td class="num">'
        yield escape(environment.finalize(t_1(environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'ties'))))
        yield escape(environment.finalize(context.call((undefined(name='share') if l_0_share is missing else l_0_share), environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'ties'), environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'judgements'), _block_vars=_block_vars)))
        yield '</td><td class="num">'
        yield escape(environment.finalize(t_4(environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'consistency'))))
        yield '</td></tr>\n</tbody>\n</table>\n<p class="note">'
        if t_5(environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'consistency')):
            pass
            yield 'Consistency needs both orders: each comparison was judged in one order only.'
        else:
            pass
            yield 'Consistency: the share of comparisons whose two orders chose the same run (a tie in both counts as the same).'
        yield '</p>\n</section>\n'
    yield '\n'
    if (not t_5(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'judge_human'))):
        pass
        l_0_h = environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'judge_human')
        _block_vars['h'] = l_0_h
        yield '<section aria-labelledby="human-h">\n<h2 id="human-h">Judge–human agreement</h2>\n'
        if environment.getattr((undefined(name='h') if l_0_h is missing else l_0_h), 'votes'):
            pass
            yield '<dl class="facts">\n<dt>Votes</dt><dd>'
            yield escape(environment.finalize(t_1(environment.getattr((undefined(name='h') if l_0_h is missing else l_0_h), 'votes'))))
            yield ' pairwise votes people cast on the judged comparisons</dd>\n<dt>Agreement</dt><dd>'
            yield escape(environment.finalize(t_4(environment.getattr((undefined(name='h') if l_0_h is missing else l_0_h), 'agreement'))))
            if ((not t_5(environment.getattr((undefined(name='h') if l_0_h is missing else l_0_h), 'ci_low'))) and (not t_5(environment.getattr((undefined(name='h') if l_0_h is missing else l_0_h), 'ci_high')))):
                pass
                yield ' ['
                yield escape(environment.finalize(t_4(environment.getattr((undefined(name='h') if l_0_h is missing else l_0_h), 'ci_low'))))
                yield ', '
                yield escape(environment.finalize(t_4(environment.getattr((undefined(name='h') if l_0_h is missing else l_0_h), 'ci_high'))))
                yield '] (Wilson 95 %)'
            yield " of the votes chose the judge's outcome (a, b or a tie)</dd>\n<dt>Cohen's κ</dt><dd>"
            yield escape(environment.finalize(t_11(environment.getattr((undefined(name='h') if l_0_h is missing else l_0_h), 'kappa'), 3)))
            yield ' over a, b and tie (0: what chance gives, 1: always the same)</dd>\n</dl>\n'
        else:
            pass
            yield '<p class="note">No one has voted on these comparisons yet (PUT /pairwise/'
            yield escape(environment.finalize(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'pairwise_id')))
            yield '/vote).</p>\n'
        yield '</section>\n'
    yield '\n'
    if (environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'both_orders') and ((undefined(name='listed') if l_0_listed is missing else l_0_listed) or (environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'status') == 'complete'))):
        pass
        yield '<section aria-labelledby="disagree-h">\n<h2 id="disagree-h">Where the two orders disagreed</h2>\n'
        if (undefined(name='listed') if l_0_listed is missing else l_0_listed):
            pass
            yield '<p>Comparisons whose two orders chose different runs: each counts as a tie. '
            yield escape(environment.finalize(t_3((undefined(name='listed') if l_0_listed is missing else l_0_listed))))
            yield ' listed'
            if ((not t_5(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'disagreements_total'))) and (environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'disagreements_total') > t_3((undefined(name='listed') if l_0_listed is missing else l_0_listed)))):
                pass
                yield ', of '
                yield escape(environment.finalize(t_1(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'disagreements_total'))))
            elif (t_3(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'disagreements')) > t_3((undefined(name='listed') if l_0_listed is missing else l_0_listed))):
                pass
                yield ', the first '
                yield escape(environment.finalize(t_3((undefined(name='listed') if l_0_listed is missing else l_0_listed))))
                yield ' of the '
                yield escape(environment.finalize(t_1(t_3(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'disagreements')))))
                yield ' read'
            yield '.</p>\n'
            for l_1_s in (undefined(name='listed') if l_0_listed is missing else l_0_listed):
                l_1_output_text = resolve('output_text')
                l_1_chose = resolve('chose')
                l_1_d = missing
                _loop_vars = {}
                pass
                l_1_d = environment.getattr(l_1_s, 'd')
                _loop_vars['d'] = l_1_d
                yield '<article class="pair" aria-label="pair '
                yield escape(environment.finalize(environment.getattr((undefined(name='d') if l_1_d is missing else l_1_d), 'pair_id')))
                yield ': '
                yield escape(environment.finalize(environment.getattr((undefined(name='d') if l_1_d is missing else l_1_d), 'a')))
                yield ' against '
                yield escape(environment.finalize(environment.getattr((undefined(name='d') if l_1_d is missing else l_1_d), 'b')))
                yield '">\n<div class="pair-head"><span>Pair <span class="id">'
                yield escape(environment.finalize(environment.getattr((undefined(name='d') if l_1_d is missing else l_1_d), 'pair_id')))
                yield '</span></span><span>a: '
                yield escape(environment.finalize(environment.getattr((undefined(name='d') if l_1_d is missing else l_1_d), 'a')))
                yield '</span><span>b: '
                yield escape(environment.finalize(environment.getattr((undefined(name='d') if l_1_d is missing else l_1_d), 'b')))
                yield '</span><span>outcome: <strong>tie</strong> (the orders disagree)</span></div>\n'
                if t_5(environment.getattr((undefined(name='d') if l_1_d is missing else l_1_d), 'input')):
                    pass
                    yield '<div class="label">Input</div>\n<p class="note">Not shown: this text was not read for the page.</p>\n'
                else:
                    pass
                    yield '<div class="label">Input ('
                    yield escape(environment.finalize(t_1(t_3(environment.getattr((undefined(name='d') if l_1_d is missing else l_1_d), 'input')))))
                    yield ' characters)</div>\n<div class="text">'
                    yield escape(environment.finalize(t_2(environment.getattr((undefined(name='d') if l_1_d is missing else l_1_d), 'input'), environment.getattr((undefined(name='limits') if l_0_limits is missing else l_0_limits), 'pair_text'))))
                    yield '</div>\n'
                yield '<div class="side">\n<div>'
                yield escape(environment.finalize(context.call((undefined(name='output_text') if l_1_output_text is missing else l_1_output_text), 'Output of a', environment.getattr((undefined(name='d') if l_1_d is missing else l_1_d), 'output_a'), _loop_vars=_loop_vars)))
                yield '</div>\n<div>'
                yield escape(environment.finalize(context.call((undefined(name='output_text') if l_1_output_text is missing else l_1_output_text), 'Output of b', environment.getattr((undefined(name='d') if l_1_d is missing else l_1_d), 'output_b'), _loop_vars=_loop_vars)))
                yield '</div>\n</div>\n<div class="side">\n<div>\n<h3>Order 1: a shown first</h3>\n<p>'
                yield escape(environment.finalize(context.call((undefined(name='chose') if l_1_chose is missing else l_1_chose), environment.getattr(l_1_s, 'first_order_run'), environment.getattr((undefined(name='d') if l_1_d is missing else l_1_d), 'first_order_winner'), _loop_vars=_loop_vars)))
                yield '</p>\n<div class="label">Reason</div>\n<div class="text">'
                yield escape(environment.finalize((t_2(environment.getattr((undefined(name='d') if l_1_d is missing else l_1_d), 'first_order_reason'), environment.getattr((undefined(name='limits') if l_0_limits is missing else l_0_limits), 'reason')) if environment.getattr((undefined(name='d') if l_1_d is missing else l_1_d), 'first_order_reason') else '(none given)')))
                yield '</div>\n</div>\n<div>\n<h3>Order 2: b shown first</h3>\n<p>'
                yield escape(environment.finalize(context.call((undefined(name='chose') if l_1_chose is missing else l_1_chose), environment.getattr(l_1_s, 'second_order_run'), environment.getattr((undefined(name='d') if l_1_d is missing else l_1_d), 'second_order_winner'), _loop_vars=_loop_vars)))
                yield '</p>\n<div class="label">Reason</div>\n<div class="text">'
                yield escape(environment.finalize((t_2(environment.getattr((undefined(name='d') if l_1_d is missing else l_1_d), 'second_order_reason'), environment.getattr((undefined(name='limits') if l_0_limits is missing else l_0_limits), 'reason')) if environment.getattr((undefined(name='d') if l_1_d is missing else l_1_d), 'second_order_reason') else '(none given)')))
                yield '</div>\n</div>\n</div>\n</article>\n'
            l_1_s = l_1_d = l_1_output_text = l_1_chose = missing
        elif ((environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'disagreements_total') == 0) or (environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'position') and (environment.getattr(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'position'), 'consistency') == 1))):
            pass
            yield '<p class="note">In every comparison both orders chose the same run.</p>\n'
        else:
            pass
            yield '<p class="note">None is listed here.</p>\n'
        yield '</section>\n'

blocks = {'title': block_title, 'header': block_header, 'main': block_main}
debug_info = '1=43&2=46&8=52&9=69&10=93&11=101&12=105&15=112&16=116&3=124&4=137&6=153&19=162&20=253&21=255&22=257&25=260&26=270&28=278&31=281&32=283&39=288&40=290&42=292&43=296&46=300&47=302&48=309&49=315&50=317&51=321&52=325&56=327&60=330&65=334&66=338&73=357&77=360&80=367&81=372&88=418&89=420&92=423&96=427&99=440&103=448&104=450&107=453&109=456&110=458&111=467&114=472&119=476&122=479&123=482&124=496&125=502&126=505&127=511&128=517&132=523&133=525&136=528&137=530&142=532&144=534&148=536&150=538&155=541'