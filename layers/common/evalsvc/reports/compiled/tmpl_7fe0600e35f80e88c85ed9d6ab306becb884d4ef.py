from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'inputs.html.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_digest = l_0_pairs_digest = l_0_judge_model = l_0_judge_prompt = l_0_facts = l_0_cell = l_0_side_by_side = missing
    try:
        t_1 = environment.filters['trim']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'trim' found.")
    try:
        t_2 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    def macro(l_1_value):
        t_3 = []
        if l_1_value is missing:
            l_1_value = undefined("parameter 'value' was not provided", name='value')
        pass
        t_3.extend((
            '<span class="digest">',
            escape(environment.finalize(l_1_value)),
            '</span>',
        ))
        return concat(t_3)
    context.exported_vars.add('digest')
    context.vars['digest'] = l_0_digest = Macro(environment, macro, 'digest', ('value',), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_inputs, l_1_result):
        t_4 = []
        if l_1_inputs is missing:
            l_1_inputs = undefined("parameter 'inputs' was not provided", name='inputs')
        if l_1_result is missing:
            l_1_result = undefined("parameter 'result' was not provided", name='result')
        pass
        if environment.getattr(l_1_inputs, 'pairs_digest'):
            pass
            t_4.append(
                escape(environment.finalize(context.call((undefined(name='digest') if l_0_digest is missing else l_0_digest), environment.getattr(l_1_inputs, 'pairs_digest')))),
            )
        elif (environment.getattr(environment.getattr(l_1_result, 'status'), 'value') == 'running'):
            pass
            t_4.append(
                'not yet: counted once every pair is scored',
            )
        elif (environment.getattr(environment.getattr(l_1_result, 'status'), 'value') == 'failed'):
            pass
            t_4.append(
                'none: the evaluation did not finish',
            )
        else:
            pass
            t_4.append(
                'not counted: some of its pairs were scored before results kept their digests',
            )
        return concat(t_4)
    context.exported_vars.add('pairs_digest')
    context.vars['pairs_digest'] = l_0_pairs_digest = Macro(environment, macro, 'pairs_digest', ('inputs', 'result'), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_inputs):
        t_5 = []
        if l_1_inputs is missing:
            l_1_inputs = undefined("parameter 'inputs' was not provided", name='inputs')
        pass
        t_5.append(
            escape(environment.finalize((environment.getattr(l_1_inputs, 'judge_model') or 'none (no judged metric)'))),
        )
        return concat(t_5)
    context.exported_vars.add('judge_model')
    context.vars['judge_model'] = l_0_judge_model = Macro(environment, macro, 'judge_model', ('inputs',), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_inputs):
        t_6 = []
        if l_1_inputs is missing:
            l_1_inputs = undefined("parameter 'inputs' was not provided", name='inputs')
        pass
        t_6.append(
            escape(environment.finalize((environment.getattr(l_1_inputs, 'judge_prompt_version') or 'none (no judged metric)'))),
        )
        return concat(t_6)
    context.exported_vars.add('judge_prompt')
    context.vars['judge_prompt'] = l_0_judge_prompt = Macro(environment, macro, 'judge_prompt', ('inputs',), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_inputs, l_1_result):
        t_7 = []
        if l_1_inputs is missing:
            l_1_inputs = undefined("parameter 'inputs' was not provided", name='inputs')
        if l_1_result is missing:
            l_1_result = undefined("parameter 'result' was not provided", name='result')
        pass
        if l_1_inputs:
            pass
            t_7.extend((
                '<dl class="facts">\n<dt>Dataset</dt><dd>',
                escape(environment.finalize(environment.getattr(environment.getattr(l_1_result, 'dataset_kind'), 'value'))),
                ' dataset ',
                escape(environment.finalize(environment.getattr(l_1_inputs, 'dataset_id'))),
                ', version ',
                escape(environment.finalize(context.call((undefined(name='digest') if l_0_digest is missing else l_0_digest), environment.getattr(l_1_inputs, 'dataset_version')))),
                '</dd>\n<dt>Pairs digest</dt><dd>',
                escape(environment.finalize(context.call((undefined(name='pairs_digest') if l_0_pairs_digest is missing else l_0_pairs_digest), l_1_inputs, l_1_result))),
                '</dd>\n<dt>Metrics set</dt><dd>',
                escape(environment.finalize(environment.getattr(l_1_inputs, 'metrics_id'))),
                '</dd>\n<dt>Definitions digest</dt><dd>',
                escape(environment.finalize(context.call((undefined(name='digest') if l_0_digest is missing else l_0_digest), environment.getattr(l_1_inputs, 'definitions_sha256')))),
                '</dd>\n<dt>Judge model</dt><dd>',
                escape(environment.finalize(context.call((undefined(name='judge_model') if l_0_judge_model is missing else l_0_judge_model), l_1_inputs))),
                '</dd>\n<dt>Judge prompt version</dt><dd>',
                escape(environment.finalize(context.call((undefined(name='judge_prompt') if l_0_judge_prompt is missing else l_0_judge_prompt), l_1_inputs))),
                '</dd>\n<dt>Judge samples</dt><dd>',
                escape(environment.finalize(environment.getattr(l_1_inputs, 'judge_samples'))),
                ' per judged pair and metric</dd>\n<dt>Service version</dt><dd>',
                escape(environment.finalize(environment.getattr(l_1_inputs, 'service_version'))),
                '</dd>\n<dt>Prices as of</dt><dd>',
                escape(environment.finalize(environment.getattr(l_1_inputs, 'prices_date'))),
                '</dd>\n</dl>\n<p class="note">The pairs digest is the SHA-256 of the pairs scored, their ids and texts: a result with the same digest scored the same pairs. While the dataset version is kept, GET /evaluation/',
                escape(environment.finalize(environment.getattr(l_1_result, 'results_id'))),
                '/pairs lists them as they were scored and POST /evaluation/',
                escape(environment.finalize(environment.getattr(l_1_result, 'results_id'))),
                '/rerun scores them again.</p>\n',
            ))
        else:
            pass
            t_7.append(
                '<p class="note">Not recorded: this result was stored before results kept what produced them (the dataset version, the pairs digest, the judge\'s prompt version). Evaluate the dataset again to have them.</p>\n',
            )
        return concat(t_7)
    context.exported_vars.add('facts')
    context.vars['facts'] = l_0_facts = Macro(environment, macro, 'facts', ('inputs', 'result'), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_inputs, l_1_result, l_1_name):
        t_8 = []
        if l_1_inputs is missing:
            l_1_inputs = undefined("parameter 'inputs' was not provided", name='inputs')
        if l_1_result is missing:
            l_1_result = undefined("parameter 'result' was not provided", name='result')
        if l_1_name is missing:
            l_1_name = undefined("parameter 'name' was not provided", name='name')
        pass
        if (not l_1_inputs):
            pass
            t_8.append(
                '<span class="note">not recorded</span>\n',
            )
        elif (l_1_name == 'dataset'):
            pass
            t_8.extend((
                escape(environment.finalize(environment.getattr(environment.getattr(l_1_result, 'dataset_kind'), 'value'))),
                ' ',
                escape(environment.finalize(environment.getattr(l_1_inputs, 'dataset_id'))),
                ', version ',
                escape(environment.finalize(context.call((undefined(name='digest') if l_0_digest is missing else l_0_digest), environment.getattr(l_1_inputs, 'dataset_version')))),
                '\n',
            ))
        elif (l_1_name == 'pairs_digest'):
            pass
            t_8.extend((
                escape(environment.finalize(context.call((undefined(name='pairs_digest') if l_0_pairs_digest is missing else l_0_pairs_digest), l_1_inputs, l_1_result))),
                '\n',
            ))
        elif (l_1_name == 'metrics'):
            pass
            t_8.extend((
                escape(environment.finalize(environment.getattr(l_1_inputs, 'metrics_id'))),
                '\n',
            ))
        elif (l_1_name == 'definitions'):
            pass
            t_8.extend((
                escape(environment.finalize(context.call((undefined(name='digest') if l_0_digest is missing else l_0_digest), environment.getattr(l_1_inputs, 'definitions_sha256')))),
                '\n',
            ))
        elif (l_1_name == 'judge_model'):
            pass
            t_8.extend((
                escape(environment.finalize(context.call((undefined(name='judge_model') if l_0_judge_model is missing else l_0_judge_model), l_1_inputs))),
                '\n',
            ))
        elif (l_1_name == 'judge_prompt'):
            pass
            t_8.extend((
                escape(environment.finalize(context.call((undefined(name='judge_prompt') if l_0_judge_prompt is missing else l_0_judge_prompt), l_1_inputs))),
                '\n',
            ))
        elif (l_1_name == 'judge_samples'):
            pass
            t_8.extend((
                escape(environment.finalize(environment.getattr(l_1_inputs, 'judge_samples'))),
                '\n',
            ))
        elif (l_1_name == 'service_version'):
            pass
            t_8.extend((
                escape(environment.finalize(environment.getattr(l_1_inputs, 'service_version'))),
                '\n',
            ))
        else:
            pass
            t_8.extend((
                escape(environment.finalize(environment.getattr(l_1_inputs, 'prices_date'))),
                '\n',
            ))
        return concat(t_8)
    context.exported_vars.add('cell')
    context.vars['cell'] = l_0_cell = Macro(environment, macro, 'cell', ('inputs', 'result', 'name'), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_baseline, l_1_candidate, l_1_base_result, l_1_cand_result, l_1_same_pairs):
        t_9 = []
        if l_1_baseline is missing:
            l_1_baseline = undefined("parameter 'baseline' was not provided", name='baseline')
        if l_1_candidate is missing:
            l_1_candidate = undefined("parameter 'candidate' was not provided", name='candidate')
        if l_1_base_result is missing:
            l_1_base_result = undefined("parameter 'base_result' was not provided", name='base_result')
        if l_1_cand_result is missing:
            l_1_cand_result = undefined("parameter 'cand_result' was not provided", name='cand_result')
        if l_1_same_pairs is missing:
            l_1_same_pairs = undefined("parameter 'same_pairs' was not provided", name='same_pairs')
        pass
        if t_2(l_1_same_pairs):
            pass
            t_9.append(
                '<p>Whether the two results scored the same pairs is not known: only a complete result stored since results keep what produced them has a pairs digest.</p>\n',
            )
        elif l_1_same_pairs:
            pass
            t_9.append(
                '<p><strong>Both results scored the same pairs</strong>: their pairs digests are equal, so the same pair ids with the same texts, whatever happened to the datasets between.</p>\n',
            )
        else:
            pass
            t_9.append(
                "<p><strong>The two results did not score the same pairs</strong>: their pairs digests differ (other pair ids, or other texts under the same ids, as when the candidate's outputs come from a changed prompt). The comparison matches pairs by id.</p>\n",
            )
        t_9.append(
            '<table class="inputs">\n<thead><tr><th scope="col"></th><th scope="col">Baseline</th><th scope="col">Candidate</th></tr></thead>\n<tbody>\n',
        )
        for (l_2_name, l_2_label) in [('dataset', 'Dataset and version'), ('pairs_digest', 'Pairs digest'), ('metrics', 'Metrics set'), ('definitions', 'Definitions digest'), ('judge_model', 'Judge model'), ('judge_prompt', 'Judge prompt version'), ('judge_samples', 'Judge samples'), ('service_version', 'Service version'), ('prices', 'Prices as of')]:
            _loop_vars = {}
            pass
            t_9.extend((
                '<tr><th scope="row">',
                escape(environment.finalize(l_2_label)),
                '</th><td>',
                escape(environment.finalize(t_1(context.call((undefined(name='cell') if l_0_cell is missing else l_0_cell), l_1_baseline, l_1_base_result, l_2_name, _loop_vars=_loop_vars)))),
                '</td><td>',
                escape(environment.finalize(t_1(context.call((undefined(name='cell') if l_0_cell is missing else l_0_cell), l_1_candidate, l_1_cand_result, l_2_name, _loop_vars=_loop_vars)))),
                '</td></tr>\n',
            ))
        l_2_name = l_2_label = missing
        t_9.append(
            '</tbody>\n</table>\n',
        )
        return concat(t_9)
    context.exported_vars.add('side_by_side')
    context.vars['side_by_side'] = l_0_side_by_side = Macro(environment, macro, 'side_by_side', ('baseline', 'candidate', 'base_result', 'cand_result', 'same_pairs'), False, False, False, context.eval_ctx.autoescape)

blocks = {}
debug_info = '2=24&4=38&5=45&8=69&9=80&11=92&12=99&14=103&15=109&16=111&17=113&18=115&19=117&20=119&21=121&22=123&24=125&30=139&31=148&33=153&34=156&35=163&36=166&37=169&38=172&39=175&40=178&41=181&42=184&43=187&44=190&45=193&46=196&47=199&48=202&50=208&54=215&55=228&57=233&65=246&66=251'