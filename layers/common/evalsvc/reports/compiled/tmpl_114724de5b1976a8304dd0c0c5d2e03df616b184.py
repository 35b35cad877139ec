from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'pair_text.html.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_conversation = l_0_tool_calls = l_0_pair_texts = l_0_contexts = l_0_vote_word = missing
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
        t_4 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    included_template = environment.get_template('conversation.html.j2', 'pair_text.html.j2')._get_default_module(context)
    l_0_conversation = getattr(included_template, 'conversation', missing)
    if l_0_conversation is missing:
        l_0_conversation = undefined(f"the template {included_template.__name__!r} (imported on line 1 in 'pair_text.html.j2') does not export the requested name 'conversation'", name='conversation')
    l_0_tool_calls = getattr(included_template, 'tool_calls', missing)
    if l_0_tool_calls is missing:
        l_0_tool_calls = undefined(f"the template {included_template.__name__!r} (imported on line 1 in 'pair_text.html.j2') does not export the requested name 'tool_calls'", name='tool_calls')
    context.vars.update({'conversation': l_0_conversation, 'tool_calls': l_0_tool_calls})
    context.exported_vars.difference_update(('conversation', 'tool_calls'))
    def macro(l_1_text, l_1_limits, l_1_output_label):
        t_5 = []
        if l_1_text is missing:
            l_1_text = undefined("parameter 'text' was not provided", name='text')
        if l_1_limits is missing:
            l_1_limits = undefined("parameter 'limits' was not provided", name='limits')
        if l_1_output_label is missing:
            l_1_output_label = 'Output'
        pass
        if environment.getattr(l_1_text, 'missing'):
            pass
            t_5.append(
                '<p class="note">This pair is no longer in the dataset: its input and output are not shown.</p>\n',
            )
        elif environment.getattr(l_1_text, 'changed'):
            pass
            t_5.append(
                '<p class="note">This pair was written again after this evaluation (the dataset was replaced, or the pair added anew): its text now is not what was scored, so it is not shown.</p>\n',
            )
        elif environment.getattr(l_1_text, 'expired'):
            pass
            t_5.extend((
                '<p class="note">This pair\'s texts are not shown: ',
                escape(environment.finalize(environment.getattr(l_1_text, 'expired'))),
                '.</p>\n',
            ))
        elif environment.getattr(l_1_text, 'unread'):
            pass
            t_5.append(
                '<p class="note">This pair\'s texts are not shown: the pairs listed here hold more text than one report reads, or the report ran out of time to read them.</p>\n',
            )
        else:
            pass
            if (not t_4(environment.getattr(l_1_text, 'messages'))):
                pass
                t_5.extend((
                    escape(environment.finalize(context.call((undefined(name='conversation') if l_0_conversation is missing else l_0_conversation), environment.getattr(l_1_text, 'messages'), l_1_limits))),
                    '\n',
                ))
            t_5.extend((
                '<div class="label">Input (',
                escape(environment.finalize(t_1(t_3(environment.getattr(l_1_text, 'input'))))),
                ' characters)</div>\n<div class="text">',
                escape(environment.finalize(t_2(environment.getattr(l_1_text, 'input'), environment.getattr(l_1_limits, 'pair_text')))),
                '</div>\n<div class="label">',
                escape(environment.finalize(l_1_output_label)),
                ' (',
                escape(environment.finalize(t_1(t_3(environment.getattr(l_1_text, 'output'))))),
                ' characters)</div>\n<div class="text">',
                escape(environment.finalize(t_2(environment.getattr(l_1_text, 'output'), environment.getattr(l_1_limits, 'pair_text')))),
                '</div>\n',
            ))
            if (not t_4(environment.getattr(l_1_text, 'calls'))):
                pass
                t_5.extend((
                    escape(environment.finalize(context.call((undefined(name='tool_calls') if l_0_tool_calls is missing else l_0_tool_calls), environment.getattr(l_1_text, 'calls'), l_1_limits))),
                    '\n',
                ))
            if (not t_4(environment.getattr(l_1_text, 'reference'))):
                pass
                t_5.extend((
                    '<div class="label">Reference (',
                    escape(environment.finalize(t_1(t_3(environment.getattr(l_1_text, 'reference'))))),
                    ' characters)</div>\n<div class="text">',
                    escape(environment.finalize(t_2(environment.getattr(l_1_text, 'reference'), environment.getattr(l_1_limits, 'pair_text')))),
                    '</div>\n',
                ))
            if (not t_4(environment.getattr(l_1_text, 'contexts'))):
                pass
                t_5.extend((
                    escape(environment.finalize(context.call((undefined(name='contexts') if l_0_contexts is missing else l_0_contexts), environment.getattr(l_1_text, 'contexts'), l_1_limits))),
                    '\n',
                ))
        return concat(t_5)
    context.exported_vars.add('pair_texts')
    context.vars['pair_texts'] = l_0_pair_texts = Macro(environment, macro, 'pair_texts', ('text', 'limits', 'output_label'), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_list, l_1_limits):
        t_6 = []
        if l_1_list is missing:
            l_1_list = undefined("parameter 'list' was not provided", name='list')
        if l_1_limits is missing:
            l_1_limits = undefined("parameter 'limits' was not provided", name='limits')
        pass
        t_6.extend((
            '<div class="contexts">\n<div class="label">Contexts (',
            escape(environment.finalize(t_3(l_1_list))),
            ', in rank order)</div>\n',
        ))
        l_2_loop = missing
        t_7 = 1
        for l_2_c, l_2_loop in LoopContext(l_1_list, undefined):
            l_2_short_context = resolve('short_context')
            _loop_vars = {}
            pass
            t_6.append(
                '<details class="context"',
            )
            if (t_3(l_2_c) <= (undefined(name='short_context') if l_2_short_context is missing else l_2_short_context)):
                pass
                t_6.append(
                    ' open',
                )
            t_6.extend((
                '>\n<summary>Context ',
                escape(environment.finalize(environment.getattr(l_2_loop, 'index'))),
                ' of ',
                escape(environment.finalize(t_3(l_1_list))),
                ' (',
                escape(environment.finalize(t_1(t_3(l_2_c)))),
                ' characters)</summary>\n<div class="text">',
                escape(environment.finalize(t_2(l_2_c, environment.getattr(l_1_limits, 'pair_text')))),
                '</div>\n</details>\n',
            ))
            t_7 = 0
        l_2_loop = l_2_c = l_2_short_context = missing
        if t_7:
            pass
            t_6.append(
                '<p class="note">The app retrieved nothing for this pair.</p>\n',
            )
        t_6.append(
            '</div>\n',
        )
        return concat(t_6)
    context.exported_vars.add('contexts')
    context.vars['contexts'] = l_0_contexts = Macro(environment, macro, 'contexts', ('list', 'limits'), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_vote):
        t_8 = []
        if l_1_vote is missing:
            l_1_vote = undefined("parameter 'vote' was not provided", name='vote')
        pass
        if (l_1_vote > 0):
            pass
            t_8.append(
                '<span class="vote-up">+1</span>',
            )
        elif (l_1_vote < 0):
            pass
            t_8.append(
                '<span class="vote-down">−1</span>',
            )
        else:
            pass
            t_8.append(
                '0',
            )
        return concat(t_8)
    context.exported_vars.add('vote_word')
    context.vars['vote_word'] = l_0_vote_word = Macro(environment, macro, 'vote_word', ('vote',), False, False, False, context.eval_ctx.autoescape)

blocks = {}
debug_info = '1=36&2=45&3=54&5=59&7=64&8=68&9=71&12=78&13=81&15=86&16=88&17=90&18=94&19=97&20=100&22=103&23=107&24=109&26=112&27=115&33=122&35=131&36=136&37=143&38=150&39=156&47=173'