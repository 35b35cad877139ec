from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'evaluation.html.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    l_0_forest_plot = l_0_histogram = l_0_pair_texts = l_0_vote_word = l_0_facts = l_0_anchored_facts = l_0_jury_section = missing
    try:
        t_1 = environment.filters['count']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'count' found.")
    try:
        t_2 = environment.filters['format']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'format' found.")
    try:
        t_3 = environment.filters['join']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'join' found.")
    try:
        t_4 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
    try:
        t_5 = environment.filters['map']
    except KeyError:
        @internalcode
        def t_5(*unused):
            raise TemplateRuntimeError("No filter named 'map' found.")
    try:
        t_6 = environment.filters['money']
    except KeyError:
        @internalcode
        def t_6(*unused):
            raise TemplateRuntimeError("No filter named 'money' found.")
    try:
        t_7 = environment.filters['number']
    except KeyError:
        @internalcode
        def t_7(*unused):
            raise TemplateRuntimeError("No filter named 'number' found.")
    try:
        t_8 = environment.filters['percent']
    except KeyError:
        @internalcode
        def t_8(*unused):
            raise TemplateRuntimeError("No filter named 'percent' found.")
    try:
        t_9 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_9(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    parent_template = environment.get_template('base.html.j2', 'evaluation.html.j2')
    for name, parent_block in parent_template.blocks.items():
        context.blocks.setdefault(name, []).append(parent_block)
    included_template = environment.get_template('charts.html.j2', 'evaluation.html.j2')._get_default_module(context)
    l_0_forest_plot = getattr(included_template, 'forest_plot', missing)
    if l_0_forest_plot is missing:
        l_0_forest_plot = undefined(f"the template {included_template.__name__!r} (imported on line 2 in 'evaluation.html.j2') does not export the requested name 'forest_plot'", name='forest_plot')
    l_0_histogram = getattr(included_template, 'histogram', missing)
    if l_0_histogram is missing:
        l_0_histogram = undefined(f"the template {included_template.__name__!r} (imported on line 2 in 'evaluation.html.j2') does not export the requested name 'histogram'", name='histogram')
    context.vars.update({'forest_plot': l_0_forest_plot, 'histogram': l_0_histogram})
    context.exported_vars.difference_update(('forest_plot', 'histogram'))
    included_template = environment.get_template('pair_text.html.j2', 'evaluation.html.j2')._get_default_module(context)
    l_0_pair_texts = getattr(included_template, 'pair_texts', missing)
    if l_0_pair_texts is missing:
        l_0_pair_texts = undefined(f"the template {included_template.__name__!r} (imported on line 3 in 'evaluation.html.j2') does not export the requested name 'pair_texts'", name='pair_texts')
    l_0_vote_word = getattr(included_template, 'vote_word', missing)
    if l_0_vote_word is missing:
        l_0_vote_word = undefined(f"the template {included_template.__name__!r} (imported on line 3 in 'evaluation.html.j2') does not export the requested name 'vote_word'", name='vote_word')
    context.vars.update({'pair_texts': l_0_pair_texts, 'vote_word': l_0_vote_word})
    context.exported_vars.difference_update(('pair_texts', 'vote_word'))
    included_template = environment.get_template('inputs.html.j2', 'evaluation.html.j2')._get_default_module(context)
    l_0_facts = getattr(included_template, 'facts', missing)
    if l_0_facts is missing:
        l_0_facts = undefined(f"the template {included_template.__name__!r} (imported on line 4 in 'evaluation.html.j2') does not export the requested name 'facts'", name='facts')
    context.vars['facts'] = l_0_facts
    context.exported_vars.discard('facts')
    def macro(l_1_an, l_1_idx):
        t_10 = []
        l_1_points = resolve('points')
        l_1_f = l_1_audited = missing
        if l_1_an is missing:
            l_1_an = undefined("parameter 'an' was not provided", name='an')
        if l_1_idx is missing:
            l_1_idx = undefined("parameter 'idx' was not provided", name='idx')
        pass
        l_1_f = environment.getattr(l_1_an, 'figures')
        l_1_audited = markup_join((t_1(environment.getattr((undefined(name='f') if l_1_f is missing else l_1_f), 'n_labeled')), ' audited pair', ('' if (environment.getattr((undefined(name='f') if l_1_f is missing else l_1_f), 'n_labeled') == 1) else 's'), ))
        t_10.extend((
            '<dt>What people would say</dt><dd class="anchored" id="anchored-',
            escape(environment.finalize(l_1_idx)),
            '">',
        ))
        if environment.getattr((undefined(name='f') if l_1_f is missing else l_1_f), 'anchored'):
            pass
            t_10.extend((
                'People would say ',
                escape(environment.finalize(t_8(environment.getattr(environment.getattr((undefined(name='f') if l_1_f is missing else l_1_f), 'anchored'), 'estimate')))),
                ' meet (',
                escape(environment.finalize(t_7((100 * environment.getattr(environment.getattr((undefined(name='f') if l_1_f is missing else l_1_f), 'anchored'), 'ci_low')), 1))),
                '–',
                escape(environment.finalize(t_7((100 * environment.getattr(environment.getattr((undefined(name='f') if l_1_f is missing else l_1_f), 'anchored'), 'ci_high')), 1))),
                ' %, ',
                escape(environment.finalize(t_2('%g', (100 * (1 - environment.getattr(l_1_an, 'alpha')))))),
                ' % interval), from ',
                escape(environment.finalize((undefined(name='audited') if l_1_audited is missing else l_1_audited))),
                ' and ',
                escape(environment.finalize(t_1(environment.getattr((undefined(name='f') if l_1_f is missing else l_1_f), 'n_unlabeled')))),
                ' judge score',
                escape(environment.finalize(('' if (environment.getattr((undefined(name='f') if l_1_f is missing else l_1_f), 'n_unlabeled') == 1) else 's'))),
                '; the judge alone says ',
                escape(environment.finalize(t_8(environment.getattr(l_1_an, 'judge_only')))),
                '.',
            ))
        elif (environment.getattr((undefined(name='f') if l_1_f is missing else l_1_f), 'n_labeled') < 2):
            pass
            t_10.extend((
                escape(environment.finalize((undefined(name='audited') if l_1_audited is missing else l_1_audited))),
                " so far: at least 2 are needed to say what people would say of every pair (vote on the metric's audit sample). The judge alone says ",
                escape(environment.finalize(t_8(environment.getattr(l_1_an, 'judge_only')))),
                '.',
            ))
        else:
            pass
            t_10.extend((
                escape(environment.finalize((undefined(name='audited') if l_1_audited is missing else l_1_audited))),
                ' and ',
                escape(environment.finalize(t_1(environment.getattr((undefined(name='f') if l_1_f is missing else l_1_f), 'n_unlabeled')))),
                ' other scored pair',
                escape(environment.finalize(('' if (environment.getattr((undefined(name='f') if l_1_f is missing else l_1_f), 'n_unlabeled') == 1) else 's'))),
                ': at least 2 of each are needed. The judge alone says ',
                escape(environment.finalize(t_8(environment.getattr(l_1_an, 'judge_only')))),
                '.',
            ))
        t_10.append(
            '</dd>\n',
        )
        if environment.getattr(l_1_an, 'plan'):
            pass
            l_1_points = t_2('%g', (100 * environment.getattr(l_1_an, 'half_width')))
            t_10.append(
                '<dt>Audited pairs needed</dt><dd>',
            )
            if (not t_9(environment.getattr(environment.getattr(l_1_an, 'plan'), 'labels_needed'))):
                pass
                t_10.extend((
                    '±',
                    escape(environment.finalize((undefined(name='points') if l_1_points is missing else l_1_points))),
                    ' points would need ',
                    escape(environment.finalize(t_1(environment.getattr(environment.getattr(l_1_an, 'plan'), 'labels_needed')))),
                    ' audited pair',
                    escape(environment.finalize(('' if (environment.getattr(environment.getattr(l_1_an, 'plan'), 'labels_needed') == 1) else 's'))),
                    ' (',
                    escape(environment.finalize(t_1(environment.getattr(environment.getattr(l_1_an, 'plan'), 'classical_labels_needed')))),
                    ' without the judge)',
                ))
            else:
                pass
                t_10.extend((
                    '±',
                    escape(environment.finalize((undefined(name='points') if l_1_points is missing else l_1_points))),
                    " points cannot be reached with the judge's scores (they alone leave a wider interval); without the judge it would need ",
                    escape(environment.finalize(t_1(environment.getattr(environment.getattr(l_1_an, 'plan'), 'classical_labels_needed')))),
                    ' audited pair',
                    escape(environment.finalize(('' if (environment.getattr(environment.getattr(l_1_an, 'plan'), 'classical_labels_needed') == 1) else 's'))),
                ))
            t_10.extend((
                '; there ',
                escape(environment.finalize(('is' if (environment.getattr(environment.getattr(l_1_an, 'plan'), 'labels_now') == 1) else 'are'))),
                ' ',
                escape(environment.finalize(t_1(environment.getattr(environment.getattr(l_1_an, 'plan'), 'labels_now')))),
                ' now.</dd>\n',
            ))
        return concat(t_10)
    context.exported_vars.add('anchored_facts')
    context.vars['anchored_facts'] = l_0_anchored_facts = Macro(environment, macro, 'anchored_facts', ('an', 'idx'), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_j, l_1_idx):
        t_11 = []
        if l_1_j is missing:
            l_1_j = undefined("parameter 'j' was not provided", name='j')
        if l_1_idx is missing:
            l_1_idx = undefined("parameter 'idx' was not provided", name='idx')
        pass
        t_11.extend((
            '<section class="jury" aria-labelledby="jury-',
            escape(environment.finalize(l_1_idx)),
            '-h">\n<h4 id="jury-',
            escape(environment.finalize(l_1_idx)),
            '-h">Jury</h4>\n<p class="jury-who">Judged by a jury of ',
            escape(environment.finalize(t_4(environment.getattr(l_1_j, 'judges')))),
            ': ',
            escape(environment.finalize(t_3(context.eval_ctx, t_5(context, environment.getattr(l_1_j, 'judges'), attribute='name'), ', '))),
            ' (',
            escape(environment.finalize(environment.getattr(l_1_j, 'aggregate'))),
            '): ',
            escape(environment.finalize(environment.getattr(l_1_j, 'aggregate_words'))),
            '.</p>\n<p class="jury-alpha">Agreement between the judges: ',
        ))
        if (not t_9(environment.getattr(l_1_j, 'alpha'))):
            pass
            t_11.extend((
                'α = ',
                escape(environment.finalize(t_7(environment.getattr(l_1_j, 'alpha'), 3))),
                " (Krippendorff's alpha over their scores of each pair; 1 is full agreement, 0 no more than chance); ",
            ))
        else:
            pass
            t_11.append(
                'α ',
            )
        t_11.extend((
            escape(environment.finalize(environment.getattr(l_1_j, 'reading'))),
            '.</p>\n<table class="jury-judges">\n<caption class="note">Each judge\'s mean score on this metric (1 to 5) beside the jury\'s',
        ))
        if environment.getattr(l_1_j, 'costs'):
            pass
            t_11.append(
                ", and what each judge's calls cost over the whole evaluation",
            )
        t_11.append(
            '.</caption>\n<thead><tr><th scope="col">Judge</th><th scope="col" class="num">Mean score</th>',
        )
        if environment.getattr(l_1_j, 'costs'):
            pass
            t_11.append(
                '<th scope="col" class="num">Cost (whole evaluation)</th>',
            )
        t_11.append(
            '</tr></thead>\n<tbody>\n',
        )
        for l_2_line in environment.getattr(l_1_j, 'judges'):
            _loop_vars = {}
            pass
            t_11.extend((
                '<tr><th scope="row">',
                escape(environment.finalize(environment.getattr(l_2_line, 'name'))),
                '</th><td class="num">',
                escape(environment.finalize(t_7(environment.getattr(l_2_line, 'mean')))),
                '</td>',
            ))
            if environment.getattr(l_1_j, 'costs'):
                pass
                t_11.extend((
                    '<td class="num">',
                    escape(environment.finalize((t_6(environment.getattr(l_2_line, 'cost')) if environment.getattr(l_2_line, 'costed') else '—'))),
                    '</td>',
                ))
            t_11.append(
                '</tr>\n',
            )
        l_2_line = missing
        t_11.extend((
            '<tr class="jury-row"><th scope="row">The jury (',
            escape(environment.finalize(environment.getattr(l_1_j, 'aggregate'))),
            ')</th><td class="num">',
            escape(environment.finalize(t_7(environment.getattr(l_1_j, 'jury_mean')))),
            '</td>',
        ))
        if environment.getattr(l_1_j, 'costs'):
            pass
            t_11.append(
                '<td class="num"></td>',
            )
        t_11.append(
            '</tr>\n</tbody>\n</table>\n</section>\n',
        )
        return concat(t_11)
    context.exported_vars.add('jury_section')
    context.vars['jury_section'] = l_0_jury_section = Macro(environment, macro, 'jury_section', ('j', 'idx'), False, False, False, context.eval_ctx.autoescape)
    yield from parent_template.root_render_func(context)

def block_title(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_result = resolve('result')
    pass
    yield 'Evaluation '
    yield escape(environment.finalize(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'results_id')))
    yield ' — report'

def block_header(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_result = resolve('result')
    pass
    yield '<h1>Evaluation report</h1>\n<p class="sub">Result <strong>'
    yield escape(environment.finalize(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'results_id')))
    yield '</strong> · <span class="status '
    yield escape(environment.finalize(environment.getattr(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'status'), 'value')))
    yield '">'
    yield escape(environment.finalize(environment.getattr(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'status'), 'value')))
    yield '</span></p>\n'

def block_main(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_result = resolve('result')
    l_0_limits = resolve('limits')
    l_0_cluster_words = resolve('cluster_words')
    l_0_facts = resolve('facts')
    l_0_inputs = resolve('inputs')
    l_0_forest = resolve('forest')
    l_0_forest_plot = resolve('forest_plot')
    l_0_cluster_shared = resolve('cluster_shared')
    l_0_report = resolve('report')
    l_0_listed = resolve('listed')
    try:
        t_1 = environment.filters['count']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'count' found.")
    try:
        t_12 = environment.filters['cut']
    except KeyError:
        @internalcode
        def t_12(*unused):
            raise TemplateRuntimeError("No filter named 'cut' found.")
    try:
        t_13 = environment.filters['int']
    except KeyError:
        @internalcode
        def t_13(*unused):
            raise TemplateRuntimeError("No filter named 'int' found.")
    try:
        t_3 = environment.filters['join']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'join' found.")
    try:
        t_4 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
    try:
        t_14 = environment.filters['max']
    except KeyError:
        @internalcode
        def t_14(*unused):
            raise TemplateRuntimeError("No filter named 'max' found.")
    try:
        t_7 = environment.filters['number']
    except KeyError:
        @internalcode
        def t_7(*unused):
            raise TemplateRuntimeError("No filter named 'number' found.")
    try:
        t_15 = environment.filters['round']
    except KeyError:
        @internalcode
        def t_15(*unused):
            raise TemplateRuntimeError("No filter named 'round' found.")
    try:
        t_16 = environment.filters['usd']
    except KeyError:
        @internalcode
        def t_16(*unused):
            raise TemplateRuntimeError("No filter named 'usd' found.")
    try:
        t_17 = environment.filters['when']
    except KeyError:
        @internalcode
        def t_17(*unused):
            raise TemplateRuntimeError("No filter named 'when' found.")
    try:
        t_9 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_9(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    if (environment.getattr(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'status'), 'value') == 'running'):
        pass
        yield '<section class="banner running" aria-labelledby="progress-h">\n<h2 id="progress-h">Still running</h2>\n<p>'
        yield escape(environment.finalize(t_1(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'pairs_done'))))
        yield ' of '
        yield escape(environment.finalize(t_1(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'pair_count'))))
        yield ' pairs scored'
        if environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'pair_count'):
            pass
            yield ' ('
            yield escape(environment.finalize(t_13(t_15(((100 * environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'pairs_done')) / environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'pair_count')), 0))))
            yield ' %)'
        yield '. Statistics appear once every pair is scored; ask for this page again later.</p>\n<progress value="'
        yield escape(environment.finalize(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'pairs_done')))
        yield '" max="'
        yield escape(environment.finalize(t_14(environment, [environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'pair_count'), 1])))
        yield '" aria-labelledby="progress-h">'
        yield escape(environment.finalize(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'pairs_done')))
        yield ' of '
        yield escape(environment.finalize(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'pair_count')))
        yield '</progress>\n</section>\n'
    elif (environment.getattr(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'status'), 'value') == 'failed'):
        pass
        yield '<section class="banner failed" aria-labelledby="failure-h">\n<h2 id="failure-h">This evaluation failed</h2>\n<p>'
        yield escape(environment.finalize(t_12(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'failure'), environment.getattr((undefined(name='limits') if l_0_limits is missing else l_0_limits), 'failure'))))
        yield '</p>\n<p>'
        yield escape(environment.finalize(t_1(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'pairs_done'))))
        yield ' of '
        yield escape(environment.finalize(t_1(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'pair_count'))))
        yield ' pairs had been scored. Evaluate again to get a result.</p>\n</section>\n'
    yield '\n<section aria-labelledby="run-h">\n<h2 id="run-h">What was run</h2>\n<dl class="facts">\n<dt>Dataset</dt><dd>'
    yield escape(environment.finalize(environment.getattr(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'dataset_kind'), 'value')))
    yield ' dataset '
    yield escape(environment.finalize(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'dataset_id')))
    yield '</dd>\n<dt>Metrics set</dt><dd>'
    yield escape(environment.finalize(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'metrics_id')))
    yield ' ('
    yield escape(environment.finalize(t_4(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'definitions'))))
    yield ' metrics)</dd>\n<dt>Pairs</dt><dd>'
    yield escape(environment.finalize(t_1(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'pair_count'))))
    yield '</dd>\n'
    if environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'cluster_by'):
        pass
        yield '<dt>Clustered by</dt><dd>'
        yield escape(environment.finalize(context.call(environment.getattr((undefined(name='cluster_words') if l_0_cluster_words is missing else l_0_cluster_words), 'get'), environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'cluster_by'), environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'cluster_by'), _block_vars=_block_vars)))
        yield '</dd>'
    if (environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'judge_samples') > 1):
        pass
        yield '<dt>Judge samples</dt><dd>'
        yield escape(environment.finalize(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'judge_samples')))
        yield ' answers per judged pair and metric, averaged</dd>'
    yield '<dt>Created</dt><dd>'
    yield escape(environment.finalize(t_17(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'created_ms'))))
    yield '</dd>\n'
    if environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'judges'):
        pass
        yield '<dt>Judges</dt><dd>a jury of '
        yield escape(environment.finalize(t_4(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'judges'))))
        yield ': '
        yield escape(environment.finalize(t_3(context.eval_ctx, environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'judges'), ', ')))
        yield ' ('
        yield escape(environment.finalize(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'jury')))
        yield ' of their scores)</dd>\n'
    else:
        pass
        yield '<dt>Judge model</dt><dd>'
        yield escape(environment.finalize((environment.getattr(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'usage'), 'model') or 'none (no judge call)')))
        yield '</dd>\n'
    yield '<dt>Judge calls</dt><dd>'
    yield escape(environment.finalize(t_1(environment.getattr(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'usage'), 'llm_calls'))))
    yield ' calls, '
    yield escape(environment.finalize(t_1(environment.getattr(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'usage'), 'cache_hits'))))
    yield ' answered from the cache</dd>\n<dt>Tokens</dt><dd>'
    yield escape(environment.finalize(t_1(environment.getattr(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'usage'), 'input_tokens'))))
    yield ' in, '
    yield escape(environment.finalize(t_1(environment.getattr(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'usage'), 'output_tokens'))))
    yield ' out</dd>\n<dt>Cost</dt><dd>'
    yield escape(environment.finalize(t_16(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'usage'))))
    yield '</dd>\n'
    if environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'system_prompt'):
        pass
        yield '<dt>System prompt</dt><dd><div class="text">'
        yield escape(environment.finalize(t_12(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'system_prompt'), environment.getattr((undefined(name='limits') if l_0_limits is missing else l_0_limits), 'prompt'))))
        yield '</div></dd>\n'
    yield '</dl>\n</section>\n\n<section aria-labelledby="inputs-h">\n<h2 id="inputs-h">What produced this result</h2>\n'
    yield escape(environment.finalize(context.call((undefined(name='facts') if l_0_facts is missing else l_0_facts), (undefined(name='inputs') if l_0_inputs is missing else l_0_inputs), (undefined(name='result') if l_0_result is missing else l_0_result), _block_vars=_block_vars)))
    yield '\n</section>\n\n'
    if (undefined(name='forest') if l_0_forest is missing else l_0_forest):
        pass
        yield '<section aria-labelledby="scores-h">\n<h2 id="scores-h">Scores</h2>\n'
        yield escape(environment.finalize(context.call((undefined(name='forest_plot') if l_0_forest_plot is missing else l_0_forest_plot), (undefined(name='forest') if l_0_forest is missing else l_0_forest), 'forest', _block_vars=_block_vars)))
        yield '\n'
        if environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'cluster_by'):
            pass
            yield '<p class="note"><span class="legend-line" aria-hidden="true"></span> 95 % interval if every pair were independent · <span class="legend-wide" aria-hidden="true"></span> 95 % clustered interval: pairs sharing their '
            yield escape(environment.finalize(context.call(environment.getattr((undefined(name='cluster_shared') if l_0_cluster_shared is missing else l_0_cluster_shared), 'get'), environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'cluster_by'), environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'cluster_by'), _block_vars=_block_vars)))
            yield ' move together, so they count as one cluster (G clusters in the table).</p>\n'
        yield '<table>\n<caption class="note">Per metric: scores from 1 (worst) to 5 (best), the mean with its 95 % confidence interval'
        if environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'cluster_by'):
            pass
            yield ' and its clustered interval (clustered by '
            yield escape(environment.finalize(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'cluster_by')))
            yield ')'
        if (environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'judge_samples') > 1):
            pass
            yield ", the judge's own noise ("
            yield escape(environment.finalize(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'judge_samples')))
            yield ' answers per pair)'
        yield ', and the votes people cast.</caption>\n<thead><tr><th scope="col">#</th><th scope="col">Metric</th><th scope="col" class="num">Mean</th><th scope="col" class="num">Interval</th>'
        if environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'cluster_by'):
            pass
            yield '<th scope="col" class="num">Clustered interval</th><th scope="col" class="num">Clusters</th>'
        if (environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'judge_samples') > 1):
            pass
            yield '<th scope="col" class="num">Judge noise (sd)</th>'
        yield '<th scope="col" class="num">Median</th><th scope="col" class="num">Min</th><th scope="col" class="num">Max</th><th scope="col" class="num">Std dev</th><th scope="col" class="num">Votes +1 / −1 / 0</th></tr></thead>\n<tbody>\n'
        def t_18(fiter):
            for l_1_m in fiter:
                if environment.getattr(l_1_m, 'summary'):
                    yield l_1_m
        for l_1_m in t_18(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'metrics')):
            l_1_short = resolve('short')
            _loop_vars = {}
            pass
            yield '<tr><th scope="row">'
            yield escape(environment.finalize((environment.getattr(l_1_m, 'idx') + 1)))
            yield '</th><td>'
            yield escape(environment.finalize(context.call((undefined(name='short') if l_1_short is missing else l_1_short), environment.getattr(l_1_m, 'definition'), 120, _loop_vars=_loop_vars)))
            yield '</td><td class="num">'
            yield escape(environment.finalize(t_7(environment.getattr(environment.getattr(l_1_m, 'summary'), 'mean'))))
            yield '</td><td class="num">['
            yield escape(environment.finalize(t_7(environment.getattr(environment.getattr(l_1_m, 'summary'), 'ci_low'))))
            yield ', '
            yield escape(environment.finalize(t_7(environment.getattr(environment.getattr(l_1_m, 'summary'), 'ci_high'))))
            yield ']</td>'
            if environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'cluster_by'):
                pass
                yield '<td class="num">'
                if (environment.getattr(l_1_m, 'clustered') and (not t_9(environment.getattr(environment.getattr(l_1_m, 'clustered'), 'ci_low_clustered')))):
                    pass
                    yield '['
                    yield escape(environment.finalize(t_7(environment.getattr(environment.getattr(l_1_m, 'clustered'), 'ci_low_clustered'))))
                    yield ', '
                    yield escape(environment.finalize(t_7(environment.getattr(environment.getattr(l_1_m, 'clustered'), 'ci_high_clustered'))))
                    yield ']'
                else:
                    pass
                    yield '—'
                yield '</td><td class="num">'
                yield escape(environment.finalize((t_1(environment.getattr(environment.getattr(l_1_m, 'clustered'), 'clusters')) if environment.getattr(l_1_m, 'clustered') else '—')))
                yield '</td>'
            if (environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'judge_samples') > 1):
                pass
                yield '<td class="num">'
                yield escape(environment.finalize((t_7(environment.getattr(l_1_m, 'judge_noise')) if (not t_9(environment.getattr(l_1_m, 'judge_noise'))) else '—')))
                yield '</td>'
            yield '<td class="num">'
            yield escape(environment.finalize(t_7(environment.getattr(environment.getattr(l_1_m, 'summary'), 'median'))))
            yield '</td><td class="num">'
            yield escape(environment.finalize(t_7(environment.getattr(environment.getattr(l_1_m, 'summary'), 'min'))))
            yield '</td><td class="num">'
            yield escape(environment.finalize(t_7(environment.getattr(environment.getattr(l_1_m, 'summary'), 'max'))))
            yield '</td><td class="num">'
            yield escape(environment.finalize(t_7(environment.getattr(environment.getattr(l_1_m, 'summary'), 'std_dev'))))
            yield '</td><td class="num">'
            if environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'critiques_more'):
                pass
                yield '—'
            else:
                pass
                yield escape(environment.finalize(environment.getattr(environment.getattr(l_1_m, 'votes'), 'up')))
                yield ' / '
                yield escape(environment.finalize(environment.getattr(environment.getattr(l_1_m, 'votes'), 'down')))
                yield ' / '
                yield escape(environment.finalize(environment.getattr(environment.getattr(l_1_m, 'votes'), 'neutral')))
            yield '</td></tr>\n'
        l_1_m = l_1_short = missing
        yield '</tbody>\n</table>\n</section>\n'
    yield '\n'
    if environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'metrics'):
        pass
        yield '<section aria-labelledby="metrics-h">\n<h2 id="metrics-h">Metrics</h2>\n'
        if environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'histogram_note'):
            pass
            yield '<p class="note">'
            yield escape(environment.finalize(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'histogram_note')))
            yield '</p>'
        for l_1_m in environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'metrics'):
            l_1_short = resolve('short')
            l_1_histograms = resolve('histograms')
            l_1_histogram = resolve('histogram')
            l_1_a = resolve('a')
            l_1_anchored_facts = resolve('anchored_facts')
            l_1_juries = resolve('juries')
            l_1_jury_section = resolve('jury_section')
            _loop_vars = {}
            pass
            yield '<section class="metric" aria-labelledby="m'
            yield escape(environment.finalize(environment.getattr(l_1_m, 'idx')))
            yield '-h">\n<h3 id="m'
            yield escape(environment.finalize(environment.getattr(l_1_m, 'idx')))
            yield '-h">Metric '
            yield escape(environment.finalize((environment.getattr(l_1_m, 'idx') + 1)))
            yield ': '
            yield escape(environment.finalize(context.call((undefined(name='short') if l_1_short is missing else l_1_short), environment.getattr(l_1_m, 'definition'), 160, _loop_vars=_loop_vars)))
            yield '</h3>\n'
            if (t_4(environment.getattr(l_1_m, 'definition')) > 160):
                pass
                yield '<div class="text">'
                yield escape(environment.finalize(t_12(environment.getattr(l_1_m, 'definition'), environment.getattr((undefined(name='limits') if l_0_limits is missing else l_0_limits), 'definition'))))
                yield '</div>'
            yield '<div class="chart-row">\n'
            if environment.getitem((undefined(name='histograms') if l_1_histograms is missing else l_1_histograms), environment.getattr(l_1_m, 'idx')):
                pass
                yield escape(environment.finalize(context.call((undefined(name='histogram') if l_1_histogram is missing else l_1_histogram), environment.getitem((undefined(name='histograms') if l_1_histograms is missing else l_1_histograms), environment.getattr(l_1_m, 'idx')), markup_join(('hist', environment.getattr(l_1_m, 'idx'), )), _loop_vars=_loop_vars)))
            yield '<dl class="facts">\n'
            if environment.getattr(l_1_m, 'summary'):
                pass
                yield '<dt>Mean</dt><dd>'
                yield escape(environment.finalize(t_7(environment.getattr(environment.getattr(l_1_m, 'summary'), 'mean'))))
                yield ' ['
                yield escape(environment.finalize(t_7(environment.getattr(environment.getattr(l_1_m, 'summary'), 'ci_low'))))
                yield ', '
                yield escape(environment.finalize(t_7(environment.getattr(environment.getattr(l_1_m, 'summary'), 'ci_high'))))
                yield ']</dd>\n'
                if environment.getattr(l_1_m, 'clustered'):
                    pass
                    yield '<dt>Clustered interval</dt><dd>'
                    if (not t_9(environment.getattr(environment.getattr(l_1_m, 'clustered'), 'ci_low_clustered'))):
                        pass
                        yield '['
                        yield escape(environment.finalize(t_7(environment.getattr(environment.getattr(l_1_m, 'clustered'), 'ci_low_clustered'))))
                        yield ', '
                        yield escape(environment.finalize(t_7(environment.getattr(environment.getattr(l_1_m, 'clustered'), 'ci_high_clustered'))))
                        yield '], '
                        yield escape(environment.finalize(t_1(environment.getattr(environment.getattr(l_1_m, 'clustered'), 'clusters'))))
                        yield ' clusters by '
                        yield escape(environment.finalize(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'cluster_by')))
                    else:
                        pass
                        yield 'none: '
                        yield escape(environment.finalize(t_1(environment.getattr(environment.getattr(l_1_m, 'clustered'), 'clusters'))))
                        yield ' cluster by '
                        yield escape(environment.finalize(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'cluster_by')))
                        yield ', and an interval needs at least 2'
                    yield '</dd>\n'
                if (not t_9(environment.getattr(l_1_m, 'judge_noise'))):
                    pass
                    yield '<dt>Judge noise</dt><dd>sd '
                    yield escape(environment.finalize(t_7(environment.getattr(l_1_m, 'judge_noise'))))
                    yield " between the judge's "
                    yield escape(environment.finalize(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'judge_samples')))
                    yield ' answers about one pair</dd>\n'
                yield '<dt>Median</dt><dd>'
                yield escape(environment.finalize(t_7(environment.getattr(environment.getattr(l_1_m, 'summary'), 'median'))))
                yield '</dd>\n'
            if environment.getattr(l_1_m, 'not_applicable'):
                pass
                yield '<dt>Not applicable</dt><dd>'
                yield escape(environment.finalize(environment.getattr(l_1_m, 'not_applicable')))
                yield ' pair'
                yield escape(environment.finalize(('' if (environment.getattr(l_1_m, 'not_applicable') == 1) else 's')))
                yield ' without what this metric needs ('
                yield escape(environment.finalize(environment.getattr(l_1_m, 'needs')))
                yield '): left out of its figures, never scored 1'
                if (not environment.getattr(l_1_m, 'summary')):
                    pass
                    yield '; no pair had it, so there are no figures'
                yield '</dd>\n'
            if environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'critiques_more'):
                pass
                yield '<dt>Votes</dt><dd>more than one report reads: GET /evaluation/'
                yield escape(environment.finalize(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'results_id')))
                yield '/agreement counts them and measures the judge against them</dd>\n'
            else:
                pass
                yield '<dt>Votes</dt><dd>'
                yield escape(environment.finalize(environment.getattr(environment.getattr(l_1_m, 'votes'), 'up')))
                yield ' +1, '
                yield escape(environment.finalize(environment.getattr(environment.getattr(l_1_m, 'votes'), 'down')))
                yield ' −1, '
                yield escape(environment.finalize(environment.getattr(environment.getattr(l_1_m, 'votes'), 'neutral')))
                yield ' 0; '
                yield escape(environment.finalize(environment.getattr(environment.getattr(l_1_m, 'votes'), 'comments')))
                yield ' with a comment</dd>\n'
            if environment.getattr(l_1_m, 'agreement'):
                pass
                l_1_a = environment.getattr(l_1_m, 'agreement')
                _loop_vars['a'] = l_1_a
                yield '<dt>Judge–human agreement</dt><dd>'
                yield escape(environment.finalize(environment.getattr((undefined(name='a') if l_1_a is missing else l_1_a), 'votes')))
                yield ' votes ('
                yield escape(environment.finalize(environment.getattr((undefined(name='a') if l_1_a is missing else l_1_a), 'positive')))
                yield ' +1, '
                yield escape(environment.finalize(environment.getattr((undefined(name='a') if l_1_a is missing else l_1_a), 'negative')))
                yield ' −1, '
                yield escape(environment.finalize(environment.getattr((undefined(name='a') if l_1_a is missing else l_1_a), 'neutral')))
                yield ' 0)</dd>\n<dt>AUC</dt><dd>'
                yield escape(environment.finalize(t_7(environment.getattr(environment.getattr((undefined(name='a') if l_1_a is missing else l_1_a), 'auc'), 'auc'), 3)))
                if (not t_9(environment.getattr(environment.getattr((undefined(name='a') if l_1_a is missing else l_1_a), 'auc'), 'ci_low'))):
                    pass
                    yield ' ['
                    yield escape(environment.finalize(t_7(environment.getattr(environment.getattr((undefined(name='a') if l_1_a is missing else l_1_a), 'auc'), 'ci_low'), 3)))
                    yield ', '
                    yield escape(environment.finalize(t_7(environment.getattr(environment.getattr((undefined(name='a') if l_1_a is missing else l_1_a), 'auc'), 'ci_high'), 3)))
                    yield ']'
                yield '</dd>\n<dt>Threshold</dt><dd>'
                if (not t_9(environment.getattr(environment.getattr((undefined(name='a') if l_1_a is missing else l_1_a), 'threshold'), 'threshold'))):
                    pass
                    yield 'meets at score ≥ '
                    yield escape(environment.finalize(environment.getattr(environment.getattr((undefined(name='a') if l_1_a is missing else l_1_a), 'threshold'), 'threshold')))
                    yield ': balanced accuracy '
                    yield escape(environment.finalize(t_7(environment.getattr(environment.getattr((undefined(name='a') if l_1_a is missing else l_1_a), 'threshold'), 'balanced_accuracy'), 3)))
                    yield ', κ '
                    yield escape(environment.finalize(t_7(environment.getattr(environment.getattr((undefined(name='a') if l_1_a is missing else l_1_a), 'threshold'), 'kappa'), 3)))
                else:
                    pass
                    yield '—'
                yield '</dd>\n<dt>Kendall τ-b</dt><dd>'
                yield escape(environment.finalize(t_7(environment.getattr((undefined(name='a') if l_1_a is missing else l_1_a), 'kendall_tau_b'), 3)))
                yield '</dd>\n'
            if (environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'critiques_more') and (environment.getattr(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'status'), 'value') == 'complete')):
                pass
                yield '<dt>What people would say</dt><dd>not computed: this result has more votes than one report reads, and an estimate from part of them could be wrong. GET /evaluation/'
                yield escape(environment.finalize(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'results_id')))
                yield '/anchored?metric_idx='
                yield escape(environment.finalize(environment.getattr(l_1_m, 'idx')))
                yield ' computes it from all of them.</dd>\n'
            elif environment.getattr(l_1_m, 'anchored'):
                pass
                yield escape(environment.finalize(context.call((undefined(name='anchored_facts') if l_1_anchored_facts is missing else l_1_anchored_facts), environment.getattr(l_1_m, 'anchored'), environment.getattr(l_1_m, 'idx'), _loop_vars=_loop_vars)))
                yield '\n'
            yield '</dl>\n</div>\n'
            if environment.getitem((undefined(name='juries') if l_1_juries is missing else l_1_juries), environment.getattr(l_1_m, 'idx')):
                pass
                yield escape(environment.finalize(context.call((undefined(name='jury_section') if l_1_jury_section is missing else l_1_jury_section), environment.getitem((undefined(name='juries') if l_1_juries is missing else l_1_juries), environment.getattr(l_1_m, 'idx')), environment.getattr(l_1_m, 'idx'), _loop_vars=_loop_vars)))
            if environment.getattr(l_1_m, 'lowest'):
                pass
                yield '<h4>Lowest-scoring pairs</h4>\n'
                for l_2_p in environment.getattr(l_1_m, 'lowest'):
                    l_2_pair_texts = resolve('pair_texts')
                    l_2_critiques_per_pair = resolve('critiques_per_pair')
                    _loop_vars = {}
                    pass
                    yield '<article class="pair" aria-label="pair '
                    yield escape(environment.finalize(environment.getattr(l_2_p, 'pair_id')))
                    yield '">\n<div class="pair-head"><span>Pair <span class="id">'
                    yield escape(environment.finalize(environment.getattr(l_2_p, 'pair_id')))
                    yield '</span></span><span>score <strong>'
                    yield escape(environment.finalize(t_7(environment.getattr(l_2_p, 'score'))))
                    yield '</strong></span></div>\n<div class="label">Reason</div>\n<div class="text">'
                    yield escape(environment.finalize((t_12(environment.getattr(l_2_p, 'reason'), environment.getattr((undefined(name='limits') if l_0_limits is missing else l_0_limits), 'reason')) if environment.getattr(l_2_p, 'reason') else '(none given)')))
                    yield '</div>\n'
                    yield escape(environment.finalize(context.call((undefined(name='pair_texts') if l_2_pair_texts is missing else l_2_pair_texts), environment.getattr(l_2_p, 'text'), (undefined(name='limits') if l_0_limits is missing else l_0_limits), _loop_vars=_loop_vars)))
                    yield '\n'
                    if environment.getattr(l_2_p, 'critiques'):
                        pass
                        yield '<div class="label">Votes and comments ('
                        yield escape(environment.finalize(t_4(environment.getattr(l_2_p, 'critiques'))))
                        yield ')</div>\n<ul>\n'
                        for l_3_c in environment.getattr(l_2_p, 'critiques')[:(undefined(name='critiques_per_pair') if l_2_critiques_per_pair is missing else l_2_critiques_per_pair)]:
                            l_3_vote_word = resolve('vote_word')
                            _loop_vars = {}
                            pass
                            yield '<li>'
                            yield escape(environment.finalize(context.call((undefined(name='vote_word') if l_3_vote_word is missing else l_3_vote_word), environment.getattr(l_3_c, 'vote'), _loop_vars=_loop_vars)))
                            yield ' by '
                            yield escape(environment.finalize(environment.getattr(l_3_c, 'user')))
                            yield ' &lt;'
                            yield escape(environment.finalize(environment.getattr(l_3_c, 'user_email')))
                            yield '&gt;, '
                            yield escape(environment.finalize(t_17(environment.getattr(l_3_c, 'time_ms'))))
                            if environment.getattr(l_3_c, 'comment'):
                                pass
                                yield ': '
                                yield escape(environment.finalize(t_12(environment.getattr(l_3_c, 'comment'), environment.getattr((undefined(name='limits') if l_0_limits is missing else l_0_limits), 'comment'))))
                            yield '</li>\n'
                        l_3_c = l_3_vote_word = missing
                        if (t_4(environment.getattr(l_2_p, 'critiques')) > (undefined(name='critiques_per_pair') if l_2_critiques_per_pair is missing else l_2_critiques_per_pair)):
                            pass
                            yield '<li class="note">and '
                            yield escape(environment.finalize((t_4(environment.getattr(l_2_p, 'critiques')) - (undefined(name='critiques_per_pair') if l_2_critiques_per_pair is missing else l_2_critiques_per_pair))))
                            yield ' more</li>'
                        yield '</ul>\n'
                    yield '</article>\n'
                l_2_p = l_2_pair_texts = l_2_critiques_per_pair = missing
            yield '</section>\n'
        l_1_m = l_1_short = l_1_histograms = l_1_histogram = l_1_a = l_1_anchored_facts = l_1_juries = l_1_jury_section = missing
        yield '</section>\n'
    yield '\n<section aria-labelledby="votes-h">\n<h2 id="votes-h">Votes and comments</h2>\n'
    if (undefined(name='listed') if l_0_listed is missing else l_0_listed):
        pass
        if environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'critiques_more'):
            pass
            yield '<p>This result has more votes and comments than one report reads: the newest '
            yield escape(environment.finalize(t_4((undefined(name='listed') if l_0_listed is missing else l_0_listed))))
            yield ' of the first '
            yield escape(environment.finalize(t_1(t_4(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'critiques')))))
            yield ' read are listed. Read them all with GET /evaluation/'
            yield escape(environment.finalize(environment.getattr((undefined(name='result') if l_0_result is missing else l_0_result), 'results_id')))
            yield '?limit=1000.</p>\n'
        else:
            pass
            yield '<p>'
            yield escape(environment.finalize(t_1(t_4(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'critiques')))))
            yield ' votes and comments'
            if (t_4(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'critiques')) > t_4((undefined(name='listed') if l_0_listed is missing else l_0_listed))):
                pass
                yield '; the newest '
                yield escape(environment.finalize(t_4((undefined(name='listed') if l_0_listed is missing else l_0_listed))))
                yield ' are listed'
            yield '.</p>\n'
        yield '<table>\n<thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Metric</th><th scope="col">Pair</th><th scope="col" class="num">Vote</th><th scope="col">Comment</th></tr></thead>\n<tbody>\n'
        for l_1_c in (undefined(name='listed') if l_0_listed is missing else l_0_listed):
            l_1_vote_word = resolve('vote_word')
            _loop_vars = {}
            pass
            yield '<tr><td>'
            yield escape(environment.finalize(t_17(environment.getattr(l_1_c, 'time_ms'))))
            yield '</td><td>'
            yield escape(environment.finalize(environment.getattr(l_1_c, 'user')))
            yield '</td><td>'
            yield escape(environment.finalize((environment.getattr(l_1_c, 'metric_idx') + 1)))
            yield '</td><td>'
            yield escape(environment.finalize(environment.getattr(l_1_c, 'pair_id')))
            yield '</td><td class="num">'
            yield escape(environment.finalize(context.call((undefined(name='vote_word') if l_1_vote_word is missing else l_1_vote_word), environment.getattr(l_1_c, 'vote'), _loop_vars=_loop_vars)))
            yield '</td><td>'
            yield escape(environment.finalize(t_12(environment.getattr(l_1_c, 'comment'), environment.getattr((undefined(name='limits') if l_0_limits is missing else l_0_limits), 'comment'))))
            yield '</td></tr>\n'
        l_1_c = l_1_vote_word = missing
        yield '</tbody>\n</table>\n'
    else:
        pass
        yield '<p class="note">No one has voted on this result yet.</p>\n'
    yield '</section>\n'

blocks = {'title': block_title, 'header': block_header, 'main': block_main}
debug_info = '1=67&2=70&3=79&4=88&10=94&11=103&12=104&13=107&14=154&15=156&16=160&19=193&20=202&21=204&22=206&23=215&25=231&26=239&28=247&29=252&31=270&5=288&6=301&8=311&36=318&37=402&40=405&41=415&43=423&46=426&47=428&54=433&55=437&56=441&57=443&58=448&59=454&60=456&61=459&63=468&65=471&66=475&67=479&68=481&69=484&76=487&79=489&82=492&83=494&84=497&87=500&88=511&90=518&91=527&98=581&101=584&102=589&103=600&104=602&105=608&107=614&109=618&110=621&111=627&112=630&114=648&115=651&117=656&119=658&120=661&122=671&123=674&125=679&127=687&128=689&129=692&130=700&131=709&132=721&134=723&135=726&136=730&137=732&141=735&142=738&144=741&145=747&146=749&148=753&149=755&150=757&151=760&153=762&154=767&156=780&169=792&170=794&171=797&173=806&178=815&179=820'