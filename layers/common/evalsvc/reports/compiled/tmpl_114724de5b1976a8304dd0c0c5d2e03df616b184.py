from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'pair_text.html.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_pair_texts = l_0_vote_word = missing
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
    pass
    def macro(l_1_text, l_1_limits, l_1_output_label):
        t_4 = []
        if l_1_text is missing:
            l_1_text = undefined("parameter 'text' was not provided", name='text')
        if l_1_limits is missing:
            l_1_limits = undefined("parameter 'limits' was not provided", name='limits')
        if l_1_output_label is missing:
            l_1_output_label = 'Output'
        pass
        if environment.getattr(l_1_text, 'missing'):
            pass
            t_4.append(
                '<p class="note">This pair is no longer in the dataset: its input and output are not shown.</p>\n',
            )
        elif environment.getattr(l_1_text, 'changed'):
            pass
            t_4.append(
                '<p class="note">This pair was written again after this evaluation (the dataset was replaced, or the pair added anew): its text now is not what was scored, so it is not shown.</p>\n',
            )
        elif environment.getattr(l_1_text, 'expired'):
            pass
            t_4.extend((
                '<p class="note">This pair\'s texts are not shown: ',
                escape(environment.finalize(environment.getattr(l_1_text, 'expired'))),
                '.</p>\n',
            ))
        elif environment.getattr(l_1_text, 'unread'):
            pass
            t_4.append(
                '<p class="note">This pair\'s texts are not shown: the pairs listed here hold more text than one report reads, or the report ran out of time to read them.</p>\n',
            )
        else:
            pass
            t_4.extend((
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
        return concat(t_4)
    context.exported_vars.add('pair_texts')
    context.vars['pair_texts'] = l_0_pair_texts = Macro(environment, macro, 'pair_texts', ('text', 'limits', 'output_label'), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_vote):
        t_5 = []
        if l_1_vote is missing:
            l_1_vote = undefined("parameter 'vote' was not provided", name='vote')
        pass
        if (l_1_vote > 0):
            pass
            t_5.append(
                '<span class="vote-up">+1</span>',
            )
        elif (l_1_vote < 0):
            pass
            t_5.append(
                '<span class="vote-down">−1</span>',
            )
        else:
            pass
            t_5.append(
                '0',
            )
        return concat(t_5)
    context.exported_vars.add('vote_word')
    context.vars['vote_word'] = l_0_vote_word = Macro(environment, macro, 'vote_word', ('vote',), False, False, False, context.eval_ctx.autoescape)

blocks = {}
debug_info = '1=30&2=39&4=44&6=49&7=53&8=56&11=65&12=67&13=69&14=73&18=80'