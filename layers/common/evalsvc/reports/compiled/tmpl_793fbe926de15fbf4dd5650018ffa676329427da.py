from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'monitor.html.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    l_0_trend_chart = l_0_long_text = missing
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
        t_3 = environment.filters['min']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'min' found.")
    try:
        t_4 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    parent_template = environment.get_template('base.html.j2', 'monitor.html.j2')
    for name, parent_block in parent_template.blocks.items():
        context.blocks.setdefault(name, []).append(parent_block)
    def macro(l_1_t, l_1_id):
        t_5 = []
        if l_1_t is missing:
            l_1_t = undefined("parameter 't' was not provided", name='t')
        if l_1_id is missing:
            l_1_id = undefined("parameter 'id' was not provided", name='id')
        pass
        t_5.extend((
            '<svg role="img" aria-labelledby="',
            escape(environment.finalize(l_1_id)),
            '-t ',
            escape(environment.finalize(l_1_id)),
            '-d" viewBox="0 0 ',
            escape(environment.finalize(environment.getattr(l_1_t, 'width'))),
            ' ',
            escape(environment.finalize(environment.getattr(l_1_t, 'height'))),
            '" width="',
            escape(environment.finalize(environment.getattr(l_1_t, 'width'))),
            '" height="',
            escape(environment.finalize(environment.getattr(l_1_t, 'height'))),
            '" class="trend">\n<title id="',
            escape(environment.finalize(l_1_id)),
            '-t">',
            escape(environment.finalize(environment.getattr(l_1_t, 'title'))),
            '</title>\n<desc id="',
            escape(environment.finalize(l_1_id)),
            '-d">',
            escape(environment.finalize(environment.getattr(l_1_t, 'description'))),
            '</desc>\n',
        ))
        for l_2_k in environment.getattr(l_1_t, 'ticks'):
            _loop_vars = {}
            pass
            t_5.extend((
                '<line class="grid" x1="',
                escape(environment.finalize(environment.getattr(l_1_t, 'plot_x0'))),
                '" y1="',
                escape(environment.finalize(environment.getattr(l_2_k, 'y'))),
                '" x2="',
                escape(environment.finalize(environment.getattr(l_1_t, 'plot_x1'))),
                '" y2="',
                escape(environment.finalize(environment.getattr(l_2_k, 'y'))),
                '"/>\n<text x="',
                escape(environment.finalize((environment.getattr(l_1_t, 'plot_x0') - 8))),
                '" y="',
                escape(environment.finalize((environment.getattr(l_2_k, 'y') + 4))),
                '" text-anchor="end">',
                escape(environment.finalize(environment.getattr(l_2_k, 'label'))),
                '</text>\n',
            ))
        l_2_k = missing
        t_5.extend((
            '<line class="axis" x1="',
            escape(environment.finalize(environment.getattr(l_1_t, 'plot_x0'))),
            '" y1="',
            escape(environment.finalize(environment.getattr(l_1_t, 'axis_y'))),
            '" x2="',
            escape(environment.finalize(environment.getattr(l_1_t, 'plot_x1'))),
            '" y2="',
            escape(environment.finalize(environment.getattr(l_1_t, 'axis_y'))),
            '"/>\n',
        ))
        l_2_loop = missing
        for l_2_l, l_2_loop in LoopContext(environment.getattr(l_1_t, 'labels'), undefined):
            _loop_vars = {}
            pass
            t_5.extend((
                '<text class="muted" x="',
                escape(environment.finalize(environment.getattr(l_2_l, 'x'))),
                '" y="',
                escape(environment.finalize((environment.getattr(l_1_t, 'axis_y') + 22))),
                '" text-anchor="',
                escape(environment.finalize(environment.getitem(environment.getattr(l_1_t, 'anchors'), environment.getattr(l_2_loop, 'index0')))),
                '">',
                escape(environment.finalize(environment.getattr(l_2_l, 'label'))),
                '</text>\n',
            ))
        l_2_loop = l_2_l = missing
        if environment.getattr(l_1_t, 'line'):
            pass
            t_5.extend((
                '<path class="axis" fill="none" d="',
                escape(environment.finalize(environment.getattr(l_1_t, 'line'))),
                '"/>',
            ))
        def t_6(fiter):
            for l_2_m in fiter:
                if (environment.getattr(l_2_m, 'mark') != 'none'):
                    yield l_2_m
        for l_2_m in t_6(environment.getattr(l_1_t, 'marks')):
            _loop_vars = {}
            pass
            t_5.extend((
                '<g>\n<title>',
                escape(environment.finalize(environment.getattr(l_2_m, 'title'))),
                '</title>\n',
            ))
            if (not t_4(environment.getattr(l_2_m, 'y'))):
                pass
                if ((not t_4(environment.getattr(l_2_m, 'y_low'))) and (not t_4(environment.getattr(l_2_m, 'y_high')))):
                    pass
                    t_5.extend((
                        '<line class="ci ',
                        escape(environment.finalize(environment.getattr(l_2_m, 'tone'))),
                        '" x1="',
                        escape(environment.finalize(environment.getattr(l_2_m, 'x'))),
                        '" y1="',
                        escape(environment.finalize(environment.getattr(l_2_m, 'y_high'))),
                        '" x2="',
                        escape(environment.finalize(environment.getattr(l_2_m, 'x'))),
                        '" y2="',
                        escape(environment.finalize(environment.getattr(l_2_m, 'y_low'))),
                        '"/>',
                    ))
                if environment.getattr(l_2_m, 'shape'):
                    pass
                    t_5.extend((
                        '<path class="',
                        escape(environment.finalize(environment.getattr(l_2_m, 'tone'))),
                        '" d="',
                        escape(environment.finalize(environment.getattr(l_2_m, 'shape'))),
                        '"/>',
                    ))
                else:
                    pass
                    t_5.extend((
                        '<circle class="',
                        escape(environment.finalize(environment.getattr(l_2_m, 'tone'))),
                        '" cx="',
                        escape(environment.finalize(environment.getattr(l_2_m, 'x'))),
                        '" cy="',
                        escape(environment.finalize(environment.getattr(l_2_m, 'y'))),
                        '" r="3.5"/>',
                    ))
            elif environment.getattr(l_2_m, 'shape'):
                pass
                t_5.extend((
                    '<path class="ci ',
                    escape(environment.finalize(environment.getattr(l_2_m, 'tone'))),
                    '" fill="none" d="',
                    escape(environment.finalize(environment.getattr(l_2_m, 'shape'))),
                    '"/>\n',
                ))
            t_5.append(
                '</g>\n',
            )
        l_2_m = missing
        t_5.append(
            '</svg>\n',
        )
        return concat(t_5)
    context.exported_vars.add('trend_chart')
    context.vars['trend_chart'] = l_0_trend_chart = Macro(environment, macro, 'trend_chart', ('t', 'id'), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_text, l_1_chars, l_1_label):
        t_7 = []
        if l_1_text is missing:
            l_1_text = undefined("parameter 'text' was not provided", name='text')
        if l_1_chars is missing:
            l_1_chars = undefined("parameter 'chars' was not provided", name='chars')
        if l_1_label is missing:
            l_1_label = undefined("parameter 'label' was not provided", name='label')
        pass
        if ((t_3(environment, [t_2(l_1_text), l_1_chars]) > 200) or (context.call(environment.getattr(l_1_text[:l_1_chars], 'count'), '\n') > 12)):
            pass
            t_7.extend((
                '<div class="text" tabindex="0" role="region" aria-label="',
                escape(environment.finalize(l_1_label)),
                '">',
                escape(environment.finalize(t_1(l_1_text, l_1_chars))),
                '</div>\n',
            ))
        else:
            pass
            t_7.extend((
                '<div class="text">',
                escape(environment.finalize(t_1(l_1_text, l_1_chars))),
                '</div>\n',
            ))
        return concat(t_7)
    context.exported_vars.add('long_text')
    context.vars['long_text'] = l_0_long_text = Macro(environment, macro, 'long_text', ('text', 'chars', 'label'), False, False, False, context.eval_ctx.autoescape)
    yield from parent_template.root_render_func(context)

def block_title(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_monitor = resolve('monitor')
    pass
    yield 'Trend report — monitor '
    yield escape(environment.finalize(environment.getattr((undefined(name='monitor') if l_0_monitor is missing else l_0_monitor), 'name')))

def block_header(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_breakable = resolve('breakable')
    l_0_monitor = resolve('monitor')
    l_0_monitor_id = resolve('monitor_id')
    l_0_next_run = resolve('next_run')
    pass
    yield '<h1>'
    yield escape(environment.finalize(context.call((undefined(name='breakable') if l_0_breakable is missing else l_0_breakable), environment.getattr((undefined(name='monitor') if l_0_monitor is missing else l_0_monitor), 'name'), _block_vars=_block_vars)))
    yield '</h1>\n<p class="sub">Monitor <strong>'
    yield escape(environment.finalize((undefined(name='monitor_id') if l_0_monitor_id is missing else l_0_monitor_id)))
    yield '</strong> · trend report of its runs · next run '
    yield escape(environment.finalize((undefined(name='next_run') if l_0_next_run is missing else l_0_next_run)))
    yield ' UTC</p>\n'

def block_main(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_runs = resolve('runs')
    l_0_next_run = resolve('next_run')
    l_0_breakable = resolve('breakable')
    l_0_monitor_id = resolve('monitor_id')
    l_0_all_failed = resolve('all_failed')
    l_0_long_text = resolve('long_text')
    l_0_limits = resolve('limits')
    l_0_latest = resolve('latest')
    l_0_monitor = resolve('monitor')
    l_0_previous = resolve('previous')
    l_0_baseline_href = resolve('baseline_href')
    l_0_max_cost = resolve('max_cost')
    l_0_created = resolve('created')
    l_0_series = resolve('series')
    l_0_report = resolve('report')
    l_0_confidence = resolve('confidence')
    l_0_sections = resolve('sections')
    l_0_uncharted = resolve('uncharted')
    l_0_uncharted_more = resolve('uncharted_more')
    l_0_regressed_runs = resolve('regressed_runs')
    l_0_failures = resolve('failures')
    l_0_q = missing
    try:
        t_8 = environment.filters['count']
    except KeyError:
        @internalcode
        def t_8(*unused):
            raise TemplateRuntimeError("No filter named 'count' found.")
    try:
        t_2 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
    try:
        t_4 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    if (not (undefined(name='runs') if l_0_runs is missing else l_0_runs)):
        pass
        yield '<section class="banner" aria-labelledby="state-h">\n<h2 id="state-h">No run yet</h2>\n<p>This monitor has not run: its first run is due at '
        yield escape(environment.finalize((undefined(name='next_run') if l_0_next_run is missing else l_0_next_run)))
        yield ' (UTC). Ask for one now with '
        yield escape(environment.finalize(context.call((undefined(name='breakable') if l_0_breakable is missing else l_0_breakable), markup_join(('POST /monitors/', (undefined(name='monitor_id') if l_0_monitor_id is missing else l_0_monitor_id), '/run', )), _block_vars=_block_vars)))
        yield '.</p>\n</section>\n'
    elif (undefined(name='all_failed') if l_0_all_failed is missing else l_0_all_failed):
        pass
        yield '<section class="banner failed" aria-labelledby="state-h">\n<h2 id="state-h">Every run shown failed</h2>\n<p>None of the '
        yield escape(environment.finalize(t_2((undefined(name='runs') if l_0_runs is missing else l_0_runs))))
        yield ' runs shown measured anything: each failed, saying why in the table of runs below. The newest failed with:</p>\n'
        yield escape(environment.finalize(context.call((undefined(name='long_text') if l_0_long_text is missing else l_0_long_text), environment.getattr(environment.getitem((undefined(name='runs') if l_0_runs is missing else l_0_runs), 0), 'failure'), environment.getattr((undefined(name='limits') if l_0_limits is missing else l_0_limits), 'failure'), 'Why the newest run failed', _block_vars=_block_vars)))
        yield '\n</section>\n'
    elif ((undefined(name='latest') if l_0_latest is missing else l_0_latest) and (environment.getattr(environment.getattr((undefined(name='latest') if l_0_latest is missing else l_0_latest), 'run'), 'status') == 'failed')):
        pass
        yield '<section class="banner failed" aria-labelledby="state-h">\n<h2 id="state-h">The latest run failed</h2>\n<p>The run of '
        yield escape(environment.finalize(environment.getattr(environment.getattr((undefined(name='latest') if l_0_latest is missing else l_0_latest), 'run'), 'when')))
        yield ' UTC failed:</p>\n'
        yield escape(environment.finalize(context.call((undefined(name='long_text') if l_0_long_text is missing else l_0_long_text), environment.getattr(environment.getattr((undefined(name='latest') if l_0_latest is missing else l_0_latest), 'run'), 'failure'), environment.getattr((undefined(name='limits') if l_0_limits is missing else l_0_limits), 'failure'), 'Why the latest run failed', _block_vars=_block_vars)))
        yield '\n</section>\n'
    elif ((undefined(name='latest') if l_0_latest is missing else l_0_latest) and environment.getattr((undefined(name='latest') if l_0_latest is missing else l_0_latest), 'regressed')):
        pass
        yield '<section class="banner failed" aria-labelledby="state-h">\n<h2 id="state-h">The latest run regressed</h2>\n<p>The run of '
        yield escape(environment.finalize(environment.getattr(environment.getattr((undefined(name='latest') if l_0_latest is missing else l_0_latest), 'run'), 'when')))
        yield ' UTC scored lower than its baseline on '
        yield escape(environment.finalize(t_2(environment.getattr((undefined(name='latest') if l_0_latest is missing else l_0_latest), 'regressed'))))
        yield ' metric'
        yield escape(environment.finalize(('s' if (t_2(environment.getattr((undefined(name='latest') if l_0_latest is missing else l_0_latest), 'regressed')) != 1) else '')))
        yield ': '
        l_1_loop = missing
        for l_1_s, l_1_loop in LoopContext(environment.getattr((undefined(name='latest') if l_0_latest is missing else l_0_latest), 'regressed'), undefined):
            _loop_vars = {}
            pass
            yield '<strong>'
            yield escape(environment.finalize(environment.getattr(l_1_s, 'name')))
            yield '</strong>'
            yield escape(environment.finalize((', ' if (not environment.getattr(l_1_loop, 'last')) else '.')))
        l_1_loop = l_1_s = missing
        yield '</p>\n</section>\n'
    elif (undefined(name='latest') if l_0_latest is missing else l_0_latest):
        pass
        yield '<section class="banner" aria-labelledby="state-h">\n<h2 id="state-h">No regression in the latest run</h2>\n<p>The run of '
        yield escape(environment.finalize(environment.getattr(environment.getattr((undefined(name='latest') if l_0_latest is missing else l_0_latest), 'run'), 'when')))
        yield ' UTC found no metric lower than its baseline'
        if (not environment.getattr(environment.getattr((undefined(name='latest') if l_0_latest is missing else l_0_latest), 'run'), 'baseline_id')):
            pass
            yield ' (it had no baseline to compare with)'
        yield '.</p>\n</section>\n'
    yield '\n<section aria-labelledby="watch-h">\n<h2 id="watch-h">What it watches</h2>\n<dl class="facts">\n<dt>Dataset</dt><dd>seed dataset '
    yield escape(environment.finalize(environment.getattr((undefined(name='monitor') if l_0_monitor is missing else l_0_monitor), 'seed_data_id')))
    yield '</dd>\n<dt>Pairs</dt><dd>'
    l_0_q = environment.getattr((undefined(name='monitor') if l_0_monitor is missing else l_0_monitor), 'pair_query')
    _block_vars['q'] = l_0_q
    if (not t_4(environment.getattr((undefined(name='q') if l_0_q is missing else l_0_q), 'latest_n_pairs'))):
        pass
        yield 'the newest '
        yield escape(environment.finalize(t_8(environment.getattr((undefined(name='q') if l_0_q is missing else l_0_q), 'latest_n_pairs'))))
    else:
        pass
        yield 'every pair'
    if environment.getattr((undefined(name='q') if l_0_q is missing else l_0_q), 'pair_labels'):
        pass
        yield ' labelled '
        l_1_loop = missing
        for l_1_l, l_1_loop in LoopContext(environment.getattr((undefined(name='q') if l_0_q is missing else l_0_q), 'pair_labels'), undefined):
            _loop_vars = {}
            pass
            yield '<bdi>'
            yield escape(environment.finalize(l_1_l))
            yield '</bdi>'
            yield escape(environment.finalize((' or ' if (not environment.getattr(l_1_loop, 'last')) else '')))
        l_1_loop = l_1_l = missing
    if (not t_4(environment.getattr((undefined(name='q') if l_0_q is missing else l_0_q), 'last_n_seconds'))):
        pass
        yield ', written in the last '
        yield escape(environment.finalize(t_8(environment.getattr((undefined(name='q') if l_0_q is missing else l_0_q), 'last_n_seconds'))))
        yield ' seconds'
    yield ', at each run</dd>\n<dt>Metrics set</dt><dd>'
    yield escape(environment.finalize(environment.getattr((undefined(name='monitor') if l_0_monitor is missing else l_0_monitor), 'metrics_id')))
    yield '</dd>\n<dt>Schedule</dt><dd>'
    yield escape(environment.finalize(environment.getattr((undefined(name='monitor') if l_0_monitor is missing else l_0_monitor), 'schedule')))
    yield ' (UTC)</dd>\n<dt>Next run</dt><dd>'
    yield escape(environment.finalize((undefined(name='next_run') if l_0_next_run is missing else l_0_next_run)))
    yield ' UTC</dd>\n<dt>Baseline</dt><dd>'
    if (undefined(name='previous') if l_0_previous is missing else l_0_previous):
        pass
        yield 'the previous complete run: each run is compared with the one before it'
    else:
        pass
        yield 'evaluation result <a href="'
        yield escape(environment.finalize((undefined(name='baseline_href') if l_0_baseline_href is missing else l_0_baseline_href)))
        yield '">'
        yield escape(environment.finalize(environment.getattr((undefined(name='monitor') if l_0_monitor is missing else l_0_monitor), 'baseline')))
        yield '</a>, every run compared with it'
    yield '</dd>\n<dt>Significance</dt><dd>α = '
    yield escape(environment.finalize(environment.getattr((undefined(name='monitor') if l_0_monitor is missing else l_0_monitor), 'alpha')))
    yield ', Holm–Bonferroni across the metrics</dd>\n<dt>A pair moved</dt><dd>when its score changed by '
    yield escape(environment.finalize(environment.getattr((undefined(name='monitor') if l_0_monitor is missing else l_0_monitor), 'regression_threshold')))
    yield ' or more</dd>\n<dt>Cost cap</dt><dd>'
    yield escape(environment.finalize((((undefined(name='max_cost') if l_0_max_cost is missing else l_0_max_cost) + ' a run') if (undefined(name='max_cost') if l_0_max_cost is missing else l_0_max_cost) else 'none (its metrics are checks: no judge is paid)')))
    yield '</dd>\n<dt>Webhook</dt><dd>'
    if environment.getattr((undefined(name='monitor') if l_0_monitor is missing else l_0_monitor), 'webhook_url'):
        pass
        yield 'set: a signed post to <span class="digest">'
        yield escape(environment.finalize(environment.getattr((undefined(name='monitor') if l_0_monitor is missing else l_0_monitor), 'webhook_url')))
        yield '</span> when a run regresses or fails'
    else:
        pass
        yield 'none: runs alert nobody'
    yield '</dd>\n<dt>Created</dt><dd>'
    yield escape(environment.finalize((undefined(name='created') if l_0_created is missing else l_0_created)))
    yield ' UTC</dd>\n</dl>\n</section>\n\n<section aria-labelledby="trends-h">\n<h2 id="trends-h">Metrics over the runs</h2>\n'
    if (not (undefined(name='runs') if l_0_runs is missing else l_0_runs)):
        pass
        yield '<p class="note">Charts appear here once the monitor has run.</p>\n'
    elif (not (undefined(name='series') if l_0_series is missing else l_0_series)):
        pass
        yield '<p class="note">No run shown measured anything yet: charts appear once a run completes.</p>\n'
    else:
        pass
        yield '<p>'
        yield escape(environment.finalize(t_2((undefined(name='runs') if l_0_runs is missing else l_0_runs))))
        yield ' run'
        yield escape(environment.finalize(('s' if (t_2((undefined(name='runs') if l_0_runs is missing else l_0_runs)) != 1) else '')))
        yield ' shown'
        if environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'more'):
            pass
            yield ': the newest '
            yield escape(environment.finalize(t_2((undefined(name='runs') if l_0_runs is missing else l_0_runs))))
            yield ' ('
            yield escape(environment.finalize(context.call((undefined(name='breakable') if l_0_breakable is missing else l_0_breakable), markup_join(('GET /monitors/', (undefined(name='monitor_id') if l_0_monitor_id is missing else l_0_monitor_id), '/history', )), _block_vars=_block_vars)))
            yield ' lists the older ones)'
        yield ", oldest left. Each metric's mean score (1 worst, 5 best) with its "
        yield escape(environment.finalize((undefined(name='confidence') if l_0_confidence is missing else l_0_confidence)))
        yield " % confidence interval: a dot and a bar; ▼ a triangle pointing down: the run regressed against its baseline; ▲ pointing up: it improved; × a cross on the axis: the run failed (no figure, the line broken). Every chart's figures are in a table under it.</p>\n"
        for l_1_c in (undefined(name='sections') if l_0_sections is missing else l_0_sections):
            l_1_short = resolve('short')
            l_1_heading_chars = resolve('heading_chars')
            l_1_trend_chart = resolve('trend_chart')
            l_1_s = missing
            _loop_vars = {}
            pass
            l_1_s = environment.getattr(l_1_c, 'series')
            _loop_vars['s'] = l_1_s
            yield '<section class="metric" aria-labelledby="m'
            yield escape(environment.finalize(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'number')))
            yield '-h">\n'
            if t_4(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'definition')):
                pass
                yield '<h3 id="m'
                yield escape(environment.finalize(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'number')))
                yield '-h">'
                yield escape(environment.finalize(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'name')))
                yield ': metric '
                yield escape(environment.finalize((environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'place') + 1)))
                yield ' of runs whose result is gone</h3>\n<p class="note">The definitions of these runs\' metrics are not known: their evaluation result is gone. Only their place in the metrics set is.</p>\n'
            else:
                pass
                yield '<h3 id="m'
                yield escape(environment.finalize(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'number')))
                yield '-h">'
                yield escape(environment.finalize(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'name')))
                yield ': '
                yield escape(environment.finalize(context.call((undefined(name='breakable') if l_0_breakable is missing else l_0_breakable), context.call((undefined(name='short') if l_1_short is missing else l_1_short), environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'definition'), (undefined(name='heading_chars') if l_1_heading_chars is missing else l_1_heading_chars), _loop_vars=_loop_vars), _loop_vars=_loop_vars)))
                yield '</h3>\n'
                if (t_2(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'definition')) > (undefined(name='heading_chars') if l_1_heading_chars is missing else l_1_heading_chars)):
                    pass
                    yield escape(environment.finalize(context.call((undefined(name='long_text') if l_0_long_text is missing else l_0_long_text), environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'definition'), environment.getattr((undefined(name='limits') if l_0_limits is missing else l_0_limits), 'definition'), markup_join(('The whole definition of ', environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'name'), )), _loop_vars=_loop_vars)))
            yield escape(environment.finalize(context.call((undefined(name='trend_chart') if l_1_trend_chart is missing else l_1_trend_chart), environment.getattr(l_1_c, 'trend'), markup_join(('trend', environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'number'), )), _loop_vars=_loop_vars)))
            yield '\n<p class="note">'
            yield escape(environment.finalize(environment.getattr(l_1_c, 'regressions')))
            yield ' regression'
            yield escape(environment.finalize(('s' if (environment.getattr(l_1_c, 'regressions') != 1) else '')))
            yield ', '
            yield escape(environment.finalize(environment.getattr(l_1_c, 'failures')))
            yield ' failed run'
            yield escape(environment.finalize(('s' if (environment.getattr(l_1_c, 'failures') != 1) else '')))
            yield ' among the runs shown.</p>\n<details>\n<summary>'
            yield escape(environment.finalize(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'name')))
            yield '\'s figures as a table</summary>\n<table>\n<caption class="note">'
            yield escape(environment.finalize(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'name')))
            yield ' in each run shown, oldest first: the mean score with its '
            yield escape(environment.finalize((undefined(name='confidence') if l_0_confidence is missing else l_0_confidence)))
            yield ' % interval, and the verdict against the run\'s baseline.</caption>\n<thead><tr><th scope="col">Run (UTC)</th><th scope="col">Mean [interval]</th><th scope="col">Verdict</th></tr></thead>\n<tbody>\n'
            for l_2_r in environment.getattr(l_1_c, 'rows'):
                _loop_vars = {}
                pass
                yield '<tr><th scope="row"><time datetime="'
                yield escape(environment.finalize(environment.getattr(l_2_r, 'iso')))
                yield '">'
                yield escape(environment.finalize(environment.getattr(l_2_r, 'when')))
                yield '</time></th><td>'
                yield escape(environment.finalize(environment.getattr(l_2_r, 'figure')))
                yield '</td><td><span class="verdict '
                yield escape(environment.finalize(environment.getattr(l_2_r, 'tone')))
                yield '">'
                yield escape(environment.finalize(environment.getattr(l_2_r, 'verdict')))
                yield '</span></td></tr>\n'
            l_2_r = missing
            yield '</tbody>\n</table>\n</details>\n</section>\n'
        l_1_c = l_1_s = l_1_short = l_1_heading_chars = l_1_trend_chart = missing
        if (undefined(name='uncharted') if l_0_uncharted is missing else l_0_uncharted):
            pass
            yield '<h3 id="uncharted-h">Not charted</h3>\n<p class="note">'
            yield escape(environment.finalize(t_8((t_2((undefined(name='uncharted') if l_0_uncharted is missing else l_0_uncharted)) + (undefined(name='uncharted_more') if l_0_uncharted_more is missing else l_0_uncharted_more)))))
            yield ' more metrics appear only in older runs, whose metrics set differed: their figures are in the table of runs.'
            if (undefined(name='uncharted_more') if l_0_uncharted_more is missing else l_0_uncharted_more):
                pass
                yield ' The first '
                yield escape(environment.finalize(t_2((undefined(name='uncharted') if l_0_uncharted is missing else l_0_uncharted))))
                yield " are named here; each run's evaluation report names its own."
            yield '</p>\n<ul aria-labelledby="uncharted-h">\n'
            for l_1_s in (undefined(name='uncharted') if l_0_uncharted is missing else l_0_uncharted):
                l_1_short = resolve('short')
                l_1_uncharted_chars = resolve('uncharted_chars')
                _loop_vars = {}
                pass
                yield '<li>'
                yield escape(environment.finalize(environment.getattr(l_1_s, 'name')))
                yield ': '
                if t_4(environment.getattr(l_1_s, 'definition')):
                    pass
                    yield 'metric '
                    yield escape(environment.finalize((environment.getattr(l_1_s, 'place') + 1)))
                    yield ' of runs whose result is gone'
                else:
                    pass
                    yield escape(environment.finalize(context.call((undefined(name='breakable') if l_0_breakable is missing else l_0_breakable), context.call((undefined(name='short') if l_1_short is missing else l_1_short), environment.getattr(l_1_s, 'definition'), (undefined(name='uncharted_chars') if l_1_uncharted_chars is missing else l_1_uncharted_chars), _loop_vars=_loop_vars), _loop_vars=_loop_vars)))
                yield '</li>\n'
            l_1_s = l_1_short = l_1_uncharted_chars = missing
            yield '</ul>\n'
    yield '</section>\n\n<section aria-labelledby="runs-h">\n<h2 id="runs-h">Runs</h2>\n'
    if (undefined(name='runs') if l_0_runs is missing else l_0_runs):
        pass
        yield '<p>'
        yield escape(environment.finalize(t_2((undefined(name='runs') if l_0_runs is missing else l_0_runs))))
        yield ' run'
        yield escape(environment.finalize(('s' if (t_2((undefined(name='runs') if l_0_runs is missing else l_0_runs)) != 1) else '')))
        yield ', newest first: '
        yield escape(environment.finalize((undefined(name='regressed_runs') if l_0_regressed_runs is missing else l_0_regressed_runs)))
        yield ' regressed, '
        yield escape(environment.finalize((undefined(name='failures') if l_0_failures is missing else l_0_failures)))
        yield ' failed.'
        if environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'more'):
            pass
            yield ' Older runs: '
            yield escape(environment.finalize(context.call((undefined(name='breakable') if l_0_breakable is missing else l_0_breakable), markup_join(('GET /monitors/', (undefined(name='monitor_id') if l_0_monitor_id is missing else l_0_monitor_id), '/history', )), _block_vars=_block_vars)))
            yield '.'
        yield '</p>\n<table>\n<caption class="note">Each run: when it was scheduled (UTC), whether it was asked for (manual) or scheduled, and its reports; how it ended, the pairs it shared with its baseline, its cost and its alert; each metric\'s mean score with its '
        yield escape(environment.finalize((undefined(name='confidence') if l_0_confidence is missing else l_0_confidence)))
        yield ' % interval and its verdict against the baseline.</caption>\n<thead><tr><th scope="col">Run (UTC)</th><th scope="col">Outcome</th><th scope="col">Metrics</th></tr></thead>\n<tbody>\n'
        for l_1_r in (undefined(name='runs') if l_0_runs is missing else l_0_runs):
            _loop_vars = {}
            pass
            yield '<tr>\n<th scope="row"><time datetime="'
            yield escape(environment.finalize(environment.getattr(l_1_r, 'iso')))
            yield '">'
            yield escape(environment.finalize(environment.getattr(l_1_r, 'when')))
            yield '</time><br><span class="note">'
            yield escape(environment.finalize(('manual' if environment.getattr(l_1_r, 'manual') else 'scheduled')))
            yield '</span>'
            if environment.getattr(l_1_r, 'evaluation_href'):
                pass
                yield '<br><a href="'
                yield escape(environment.finalize(environment.getattr(l_1_r, 'evaluation_href')))
                yield '">evaluation report</a>'
            if environment.getattr(l_1_r, 'comparison_href'):
                pass
                yield '<br><a href="'
                yield escape(environment.finalize(environment.getattr(l_1_r, 'comparison_href')))
                yield '">comparison</a>'
            yield '</th>\n<td>\n<span class="status '
            yield escape(environment.finalize(environment.getattr(l_1_r, 'status')))
            yield '">'
            yield escape(environment.finalize(environment.getattr(l_1_r, 'status_words')))
            yield '</span>\n'
            if (not t_4(environment.getattr(l_1_r, 'failure'))):
                pass
                yield escape(environment.finalize(context.call((undefined(name='long_text') if l_0_long_text is missing else l_0_long_text), environment.getattr(l_1_r, 'failure'), environment.getattr((undefined(name='limits') if l_0_limits is missing else l_0_limits), 'failure'), markup_join(('Why the run of ', environment.getattr(l_1_r, 'when'), ' failed', )), _loop_vars=_loop_vars)))
            yield '<div>Pairs matched: '
            yield escape(environment.finalize(environment.getattr(l_1_r, 'pairs_matched')))
            yield '</div>\n<div>Cost: '
            yield escape(environment.finalize(environment.getattr(l_1_r, 'cost')))
            yield '</div>\n<div>Alert: '
            yield escape(environment.finalize(environment.getattr(l_1_r, 'alert')))
            yield '</div>\n</td>\n<td>\n'
            if environment.getattr(l_1_r, 'definitions_gone'):
                pass
                yield '<p class="note">This run\'s result is gone: its metrics\' definitions are not known.</p>'
            t_9 = 1
            for l_2_m in environment.getattr(l_1_r, 'metrics'):
                _loop_vars = {}
                pass
                yield '<div><strong>'
                yield escape(environment.finalize(environment.getattr(environment.getattr(l_2_m, 'series'), 'name')))
                yield '</strong> '
                yield escape(environment.finalize(environment.getattr(l_2_m, 'figure')))
                yield ' <span class="verdict '
                yield escape(environment.finalize(environment.getattr(l_2_m, 'tone')))
                yield '">'
                yield escape(environment.finalize(environment.getattr(l_2_m, 'verdict')))
                yield '</span></div>\n'
                t_9 = 0
            l_2_m = missing
            if t_9:
                pass
                yield '—\n'
            yield '</td>\n</tr>\n'
        l_1_r = missing
        yield '</tbody>\n</table>\n'
    else:
        pass
        yield '<p class="note">No run yet: the first is due at '
        yield escape(environment.finalize((undefined(name='next_run') if l_0_next_run is missing else l_0_next_run)))
        yield ' UTC.</p>\n'
    yield '</section>\n'

blocks = {'title': block_title, 'header': block_header, 'main': block_main}
debug_info = '1=37&8=40&9=49&10=61&11=65&12=70&13=75&14=83&16=93&17=103&18=108&20=118&21=125&23=134&24=137&25=139&26=154&27=174&28=178&36=193&37=202&38=206&40=215&2=223&3=235&4=248&5=250&43=255&44=303&47=306&49=310&52=313&53=315&55=317&58=320&59=322&61=324&64=327&66=343&69=346&76=353&77=355&78=382&79=384&80=386&81=388&82=399&83=401&84=403&85=405&86=414&92=416&94=419&97=425&98=439&99=446&100=449&101=451&102=454&105=463&106=469&108=472&109=474&111=482&113=484&116=488&117=492&124=505&126=508&128=516&129=522&138=536&139=539&141=553&144=555&146=559&148=576&149=580&150=584&151=586&152=588&155=590&156=594&157=598&167=617'