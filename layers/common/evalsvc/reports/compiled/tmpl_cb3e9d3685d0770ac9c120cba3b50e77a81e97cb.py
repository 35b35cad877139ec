from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'conversation.html.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_conversation = l_0_message = l_0_tool_calls = l_0_ended = l_0_call_cell = missing
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
        t_4 = environment.tests['defined']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No test named 'defined' found.")
    try:
        t_5 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_5(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    yield '\n'
    def macro(l_1_messages, l_1_limits):
        t_6 = []
        l_1_conversation_view = resolve('conversation_view')
        l_1_view = l_1_earlier = missing
        if l_1_messages is missing:
            l_1_messages = undefined("parameter 'messages' was not provided", name='messages')
        if l_1_limits is missing:
            l_1_limits = undefined("parameter 'limits' was not provided", name='limits')
        pass
        l_1_view = context.call((undefined(name='conversation_view') if l_1_conversation_view is missing else l_1_conversation_view), l_1_messages, environment.getattr(l_1_limits, 'items'))
        l_1_earlier = (environment.getattr((undefined(name='view') if l_1_view is missing else l_1_view), 'count') - t_3(environment.getattr((undefined(name='view') if l_1_view is missing else l_1_view), 'last')))
        t_6.extend((
            '<div class="conversation">\n<div class="label">Conversation before the input (',
            escape(environment.finalize(t_1(environment.getattr((undefined(name='view') if l_1_view is missing else l_1_view), 'count')))),
            ' message',
            escape(environment.finalize(('' if (environment.getattr((undefined(name='view') if l_1_view is missing else l_1_view), 'count') == 1) else 's'))),
            ')</div>\n',
        ))
        if (not environment.getattr((undefined(name='view') if l_1_view is missing else l_1_view), 'count')):
            pass
            t_6.append(
                '<p class="note">No message came before the input: it opens the conversation.</p>\n',
            )
        if (undefined(name='earlier') if l_1_earlier is missing else l_1_earlier):
            pass
            t_6.extend((
                '<details class="earlier">\n<summary>',
                escape(environment.finalize(t_1((undefined(name='earlier') if l_1_earlier is missing else l_1_earlier)))),
                ' earlier message',
                escape(environment.finalize(('' if ((undefined(name='earlier') if l_1_earlier is missing else l_1_earlier) == 1) else 's'))),
                '</summary>\n',
            ))
            if environment.getattr((undefined(name='view') if l_1_view is missing else l_1_view), 'omitted'):
                pass
                t_6.extend((
                    '<p class="note">The first ',
                    escape(environment.finalize(t_1(environment.getattr((undefined(name='view') if l_1_view is missing else l_1_view), 'omitted')))),
                    ' are not shown: a page this long shows at most the last ',
                    escape(environment.finalize(t_1(environment.getattr(l_1_limits, 'items')))),
                    ' messages of a conversation.</p>\n',
                ))
            for l_2_m in environment.getattr((undefined(name='view') if l_1_view is missing else l_1_view), 'earlier'):
                _loop_vars = {}
                pass
                t_6.extend((
                    escape(environment.finalize(context.call((undefined(name='message') if l_0_message is missing else l_0_message), l_2_m, environment.getattr((undefined(name='view') if l_1_view is missing else l_1_view), 'count'), l_1_limits, _loop_vars=_loop_vars))),
                    '\n',
                ))
            l_2_m = missing
            t_6.append(
                '</details>\n',
            )
        for l_2_m in environment.getattr((undefined(name='view') if l_1_view is missing else l_1_view), 'last'):
            _loop_vars = {}
            pass
            t_6.extend((
                escape(environment.finalize(context.call((undefined(name='message') if l_0_message is missing else l_0_message), l_2_m, environment.getattr((undefined(name='view') if l_1_view is missing else l_1_view), 'count'), l_1_limits, _loop_vars=_loop_vars))),
                '\n',
            ))
        l_2_m = missing
        t_6.append(
            '</div>\n',
        )
        return concat(t_6)
    context.exported_vars.add('conversation')
    context.vars['conversation'] = l_0_conversation = Macro(environment, macro, 'conversation', ('messages', 'limits'), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_m, l_1_count, l_1_limits):
        t_7 = []
        if l_1_m is missing:
            l_1_m = undefined("parameter 'm' was not provided", name='m')
        if l_1_count is missing:
            l_1_count = undefined("parameter 'count' was not provided", name='count')
        if l_1_limits is missing:
            l_1_limits = undefined("parameter 'limits' was not provided", name='limits')
        pass
        t_7.extend((
            '<div class="message">\n<div class="role"><strong>',
            escape(environment.finalize(environment.getattr(environment.getattr(l_1_m, 'message'), 'role'))),
            '</strong> · message ',
            escape(environment.finalize(t_1(environment.getattr(l_1_m, 'number')))),
            ' of ',
            escape(environment.finalize(t_1(l_1_count))),
            ' (',
            escape(environment.finalize(t_1(t_3(environment.getattr(environment.getattr(l_1_m, 'message'), 'content'))))),
            ' characters)</div>\n<div class="text">',
            escape(environment.finalize(t_2(environment.getattr(environment.getattr(l_1_m, 'message'), 'content'), environment.getattr(l_1_limits, 'pair_text')))),
            '</div>\n</div>\n',
        ))
        return concat(t_7)
    context.exported_vars.add('message')
    context.vars['message'] = l_0_message = Macro(environment, macro, 'message', ('m', 'count', 'limits'), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_calls, l_1_limits):
        t_8 = []
        l_1_call_rows = resolve('call_rows')
        l_1_made = l_1_compared = missing
        if l_1_calls is missing:
            l_1_calls = undefined("parameter 'calls' was not provided", name='calls')
        if l_1_limits is missing:
            l_1_limits = undefined("parameter 'limits' was not provided", name='limits')
        pass
        l_1_made = (environment.getattr(l_1_calls, 'made') or ())
        l_1_compared = (not t_5(environment.getattr(l_1_calls, 'expected')))
        t_8.extend((
            '<div class="calls">\n<table class="calls">\n<caption>Tool calls: ',
            escape(environment.finalize(t_1(t_3((undefined(name='made') if l_1_made is missing else l_1_made))))),
            ' made',
        ))
        if (undefined(name='compared') if l_1_compared is missing else l_1_compared):
            pass
            t_8.extend((
                ', ',
                escape(environment.finalize(t_1(t_3(environment.getattr(l_1_calls, 'expected'))))),
                ' expected',
            ))
        t_8.append(
            '.\n',
        )
        if (not (undefined(name='compared') if l_1_compared is missing else l_1_compared)):
            pass
            t_8.append(
                'No expected calls were given: nothing to compare with.\n',
            )
        elif t_5(environment.getattr(l_1_calls, 'first_difference')):
            pass
            t_8.append(
                'The calls made are the expected ones, in order.\n',
            )
        else:
            pass
            t_8.extend((
                'First difference at call ',
                escape(environment.finalize(t_1((environment.getattr(l_1_calls, 'first_difference') + 1)))),
                '.\n',
            ))
        t_8.append(
            '</caption>\n<thead><tr><th scope="col" class="num">Call</th><th scope="col">Made</th>',
        )
        if (undefined(name='compared') if l_1_compared is missing else l_1_compared):
            pass
            t_8.append(
                '<th scope="col">Expected</th>',
            )
        t_8.append(
            '</tr></thead>\n<tbody>\n',
        )
        for l_2_row in context.call((undefined(name='call_rows') if l_1_call_rows is missing else l_1_call_rows), l_1_calls, environment.getattr(l_1_limits, 'items')):
            _loop_vars = {}
            pass
            if t_4(environment.getattr(l_2_row, 'index')):
                pass
                t_8.append(
                    '<tr',
                )
                if environment.getattr(l_2_row, 'differs'):
                    pass
                    t_8.append(
                        ' class="first-difference"',
                    )
                t_8.extend((
                    '>\n<th scope="row" class="num">',
                    escape(environment.finalize(t_1((environment.getattr(l_2_row, 'index') + 1)))),
                    '</th>\n<td>',
                    escape(environment.finalize(context.call((undefined(name='call_cell') if l_0_call_cell is missing else l_0_call_cell), environment.getattr(l_2_row, 'made'), environment.getattr(l_2_row, 'differs'), l_1_limits, context.call((undefined(name='ended') if l_0_ended is missing else l_0_ended), environment.getattr(l_1_calls, 'made'), 'made', _loop_vars=_loop_vars), _loop_vars=_loop_vars))),
                    '</td>\n',
                ))
                if (undefined(name='compared') if l_1_compared is missing else l_1_compared):
                    pass
                    t_8.extend((
                        '<td>',
                        escape(environment.finalize(context.call((undefined(name='call_cell') if l_0_call_cell is missing else l_0_call_cell), environment.getattr(l_2_row, 'expected'), environment.getattr(l_2_row, 'differs'), l_1_limits, context.call((undefined(name='ended') if l_0_ended is missing else l_0_ended), environment.getattr(l_1_calls, 'expected'), 'expected', _loop_vars=_loop_vars), _loop_vars=_loop_vars))),
                        '</td>\n',
                    ))
                t_8.append(
                    '</tr>\n',
                )
            else:
                pass
                t_8.extend((
                    '<tr class="left-out"><td colspan="',
                    escape(environment.finalize((3 if (undefined(name='compared') if l_1_compared is missing else l_1_compared) else 2))),
                    '" class="note">',
                ))
                if (environment.getattr(l_2_row, 'first') == environment.getattr(l_2_row, 'last')):
                    pass
                    t_8.extend((
                        'Call ',
                        escape(environment.finalize(t_1((environment.getattr(l_2_row, 'first') + 1)))),
                        ' is',
                    ))
                else:
                    pass
                    t_8.extend((
                        'Calls ',
                        escape(environment.finalize(t_1((environment.getattr(l_2_row, 'first') + 1)))),
                        ' to ',
                        escape(environment.finalize(t_1((environment.getattr(l_2_row, 'last') + 1)))),
                        ' are',
                    ))
                t_8.extend((
                    ' not shown: a page this long shows the first ',
                    escape(environment.finalize(t_1(environment.getattr(l_1_limits, 'items')))),
                    ' and the first difference.</td></tr>\n',
                ))
        l_2_row = missing
        if (not environment.getattr(l_1_calls, 'rows')):
            pass
            t_8.extend((
                '<tr><td colspan="',
                escape(environment.finalize((3 if (undefined(name='compared') if l_1_compared is missing else l_1_compared) else 2))),
                '" class="note">No call was made',
            ))
            if (undefined(name='compared') if l_1_compared is missing else l_1_compared):
                pass
                t_8.append(
                    ' and none was expected',
                )
            t_8.append(
                '.</td></tr>\n',
            )
        t_8.append(
            '</tbody>\n</table>\n</div>\n',
        )
        return concat(t_8)
    context.exported_vars.add('tool_calls')
    context.vars['tool_calls'] = l_0_tool_calls = Macro(environment, macro, 'tool_calls', ('calls', 'limits'), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_list, l_1_done):
        t_9 = []
        if l_1_list is missing:
            l_1_list = undefined("parameter 'list' was not provided", name='list')
        if l_1_done is missing:
            l_1_done = undefined("parameter 'done' was not provided", name='done')
        pass
        if t_5(l_1_list):
            pass
            t_9.append(
                'No call (none was recorded).',
            )
        elif (not l_1_list):
            pass
            t_9.extend((
                'No call (none was ',
                escape(environment.finalize(l_1_done)),
                ').',
            ))
        else:
            pass
            t_9.extend((
                'No call (only ',
                escape(environment.finalize(t_1(t_3(l_1_list)))),
                ' ',
                escape(environment.finalize(('was' if (t_3(l_1_list) == 1) else 'were'))),
                ' ',
                escape(environment.finalize(l_1_done)),
                ').',
            ))
        return concat(t_9)
    context.exported_vars.add('ended')
    context.vars['ended'] = l_0_ended = Macro(environment, macro, 'ended', ('list', 'done'), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_call, l_1_differs, l_1_limits, l_1_ended):
        t_10 = []
        if l_1_call is missing:
            l_1_call = undefined("parameter 'call' was not provided", name='call')
        if l_1_differs is missing:
            l_1_differs = undefined("parameter 'differs' was not provided", name='differs')
        if l_1_limits is missing:
            l_1_limits = undefined("parameter 'limits' was not provided", name='limits')
        if l_1_ended is missing:
            l_1_ended = undefined("parameter 'ended' was not provided", name='ended')
        pass
        if l_1_differs:
            pass
            t_10.append(
                '<strong class="diff-mark"><span aria-hidden="true">▶</span> First difference</strong>',
            )
        if (not t_5(l_1_call)):
            pass
            t_10.extend((
                '<code class="tool">',
                escape(environment.finalize(t_2(environment.getattr(l_1_call, 'name'), environment.getattr(l_1_limits, 'pair_text')))),
                '</code>\n<pre class="arguments">',
                escape(environment.finalize(t_2(environment.getattr(l_1_call, 'arguments'), environment.getattr(l_1_limits, 'pair_text')))),
                '</pre>\n',
            ))
        else:
            pass
            t_10.extend((
                '<span class="note">',
                escape(environment.finalize(l_1_ended)),
                '</span>\n',
            ))
        return concat(t_10)
    context.exported_vars.add('call_cell')
    context.vars['call_cell'] = l_0_call_cell = Macro(environment, macro, 'call_cell', ('call', 'differs', 'limits', 'ended'), False, False, False, context.eval_ctx.autoescape)

blocks = {}
debug_info = '4=43&5=52&6=53&8=56&9=61&12=66&14=70&15=75&16=79&18=84&19=88&23=95&24=99&29=110&31=121&32=129&37=136&38=145&39=146&42=149&43=162&45=167&48=176&51=182&53=190&54=193&55=198&56=205&57=207&58=210&59=214&63=224&66=249&67=253&75=271&77=305&78=316&79=321&80=325&81=327&83=334'