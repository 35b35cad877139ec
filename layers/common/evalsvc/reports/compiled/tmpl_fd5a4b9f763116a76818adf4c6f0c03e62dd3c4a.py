from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'charts.html.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_forest_plot = l_0_histogram = l_0_wins_ties_losses = missing
    try:
        t_1 = environment.filters['count']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'count' found.")
    try:
        t_2 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    def macro(l_1_f, l_1_id):
        t_3 = []
        if l_1_f is missing:
            l_1_f = undefined("parameter 'f' was not provided", name='f')
        if l_1_id is missing:
            l_1_id = undefined("parameter 'id' was not provided", name='id')
        pass
        t_3.extend((
            '<svg role="img" aria-labelledby="',
            escape(environment.finalize(l_1_id)),
            '-t ',
            escape(environment.finalize(l_1_id)),
            '-d" viewBox="0 0 ',
            escape(environment.finalize(environment.getattr(l_1_f, 'width'))),
            ' ',
            escape(environment.finalize(environment.getattr(l_1_f, 'height'))),
            '" width="',
            escape(environment.finalize(environment.getattr(l_1_f, 'width'))),
            '" height="',
            escape(environment.finalize(environment.getattr(l_1_f, 'height'))),
            '" class="forest">\n<title id="',
            escape(environment.finalize(l_1_id)),
            '-t">',
            escape(environment.finalize(environment.getattr(l_1_f, 'title'))),
            '</title>\n<desc id="',
            escape(environment.finalize(l_1_id)),
            '-d">',
            escape(environment.finalize(environment.getattr(l_1_f, 'description'))),
            '</desc>\n',
        ))
        for l_2_t in environment.getattr(l_1_f, 'ticks'):
            _loop_vars = {}
            pass
            t_3.extend((
                '<line class="grid" x1="',
                escape(environment.finalize(environment.getattr(l_2_t, 'x'))),
                '" y1="4" x2="',
                escape(environment.finalize(environment.getattr(l_2_t, 'x'))),
                '" y2="',
                escape(environment.finalize(environment.getattr(l_1_f, 'axis_y'))),
                '"/>\n<text x="',
                escape(environment.finalize(environment.getattr(l_2_t, 'x'))),
                '" y="',
                escape(environment.finalize((environment.getattr(l_1_f, 'axis_y') + 16))),
                '" text-anchor="middle">',
                escape(environment.finalize(environment.getattr(l_2_t, 'label'))),
                '</text>\n',
            ))
        l_2_t = missing
        t_3.extend((
            '<line class="axis" x1="',
            escape(environment.finalize(environment.getattr(l_1_f, 'plot_x0'))),
            '" y1="',
            escape(environment.finalize(environment.getattr(l_1_f, 'axis_y'))),
            '" x2="',
            escape(environment.finalize(environment.getattr(l_1_f, 'plot_x1'))),
            '" y2="',
            escape(environment.finalize(environment.getattr(l_1_f, 'axis_y'))),
            '"/>\n',
        ))
        if (not t_2(environment.getattr(l_1_f, 'reference_x'))):
            pass
            t_3.extend((
                '<line class="ref" x1="',
                escape(environment.finalize(environment.getattr(l_1_f, 'reference_x'))),
                '" y1="4" x2="',
                escape(environment.finalize(environment.getattr(l_1_f, 'reference_x'))),
                '" y2="',
                escape(environment.finalize(environment.getattr(l_1_f, 'axis_y'))),
                '"/>\n',
            ))
        for l_2_r in environment.getattr(l_1_f, 'rows'):
            _loop_vars = {}
            pass
            t_3.extend((
                '<g>\n<title>',
                escape(environment.finalize(environment.getattr(l_2_r, 'title'))),
                '</title>\n<text x="0" y="',
                escape(environment.finalize((environment.getattr(l_2_r, 'y') + 4))),
                '">',
                escape(environment.finalize(environment.getattr(l_2_r, 'label'))),
                '</text>\n',
            ))
            if ((not t_2(environment.getattr(l_2_r, 'x_wide_low'))) and (not t_2(environment.getattr(l_2_r, 'x_wide_high')))):
                pass
                t_3.extend((
                    '<line class="ci-wide ',
                    escape(environment.finalize(environment.getattr(l_2_r, 'tone'))),
                    '" x1="',
                    escape(environment.finalize(environment.getattr(l_2_r, 'x_wide_low'))),
                    '" y1="',
                    escape(environment.finalize(environment.getattr(l_2_r, 'y'))),
                    '" x2="',
                    escape(environment.finalize(environment.getattr(l_2_r, 'x_wide_high'))),
                    '" y2="',
                    escape(environment.finalize(environment.getattr(l_2_r, 'y'))),
                    '"/>\n',
                ))
            if ((not t_2(environment.getattr(l_2_r, 'x_low'))) and (not t_2(environment.getattr(l_2_r, 'x_high')))):
                pass
                t_3.extend((
                    '<line class="ci ',
                    escape(environment.finalize(environment.getattr(l_2_r, 'tone'))),
                    '" x1="',
                    escape(environment.finalize(environment.getattr(l_2_r, 'x_low'))),
                    '" y1="',
                    escape(environment.finalize(environment.getattr(l_2_r, 'y'))),
                    '" x2="',
                    escape(environment.finalize(environment.getattr(l_2_r, 'x_high'))),
                    '" y2="',
                    escape(environment.finalize(environment.getattr(l_2_r, 'y'))),
                    '"/>\n',
                ))
            if (not t_2(environment.getattr(l_2_r, 'x'))):
                pass
                t_3.extend((
                    '<circle class="',
                    escape(environment.finalize(environment.getattr(l_2_r, 'tone'))),
                    '" cx="',
                    escape(environment.finalize(environment.getattr(l_2_r, 'x'))),
                    '" cy="',
                    escape(environment.finalize(environment.getattr(l_2_r, 'y'))),
                    '" r="5"/>\n',
                ))
            t_3.extend((
                '<text x="',
                escape(environment.finalize((environment.getattr(l_1_f, 'plot_x1') + 12))),
                '" y="',
                escape(environment.finalize((environment.getattr(l_2_r, 'y') + 4))),
                '">',
                escape(environment.finalize(environment.getattr(l_2_r, 'value'))),
                '</text>\n</g>\n',
            ))
        l_2_r = missing
        t_3.append(
            '</svg>\n',
        )
        return concat(t_3)
    context.exported_vars.add('forest_plot')
    context.vars['forest_plot'] = l_0_forest_plot = Macro(environment, macro, 'forest_plot', ('f', 'id'), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_h, l_1_id):
        t_4 = []
        if l_1_h is missing:
            l_1_h = undefined("parameter 'h' was not provided", name='h')
        if l_1_id is missing:
            l_1_id = undefined("parameter 'id' was not provided", name='id')
        pass
        t_4.extend((
            '<svg role="img" aria-labelledby="',
            escape(environment.finalize(l_1_id)),
            '-t ',
            escape(environment.finalize(l_1_id)),
            '-d" viewBox="0 0 ',
            escape(environment.finalize(environment.getattr(l_1_h, 'width'))),
            ' ',
            escape(environment.finalize(environment.getattr(l_1_h, 'height'))),
            '" width="',
            escape(environment.finalize(environment.getattr(l_1_h, 'width'))),
            '" height="',
            escape(environment.finalize(environment.getattr(l_1_h, 'height'))),
            '" class="histogram">\n<title id="',
            escape(environment.finalize(l_1_id)),
            '-t">',
            escape(environment.finalize(environment.getattr(l_1_h, 'title'))),
            '</title>\n<desc id="',
            escape(environment.finalize(l_1_id)),
            '-d">',
            escape(environment.finalize(environment.getattr(l_1_h, 'description'))),
            '</desc>\n<line class="axis" x1="30" y1="',
            escape(environment.finalize(environment.getattr(l_1_h, 'base_y'))),
            '" x2="',
            escape(environment.finalize((environment.getattr(l_1_h, 'width') - 4))),
            '" y2="',
            escape(environment.finalize(environment.getattr(l_1_h, 'base_y'))),
            '"/>\n',
        ))
        for l_2_b in environment.getattr(l_1_h, 'bars'):
            _loop_vars = {}
            pass
            t_4.extend((
                '<g>\n<title>score ',
                escape(environment.finalize(environment.getattr(l_2_b, 'label'))),
                ': ',
                escape(environment.finalize(t_1(environment.getattr(l_2_b, 'pairs')))),
                ' pairs (',
                escape(environment.finalize(environment.getattr(l_2_b, 'share'))),
                ')</title>\n<rect class="bar" x="',
                escape(environment.finalize(environment.getattr(l_2_b, 'x'))),
                '" y="',
                escape(environment.finalize(environment.getattr(l_2_b, 'y'))),
                '" width="',
                escape(environment.finalize(environment.getattr(l_2_b, 'width'))),
                '" height="',
                escape(environment.finalize(environment.getattr(l_2_b, 'height'))),
                '"/>\n<text x="',
                escape(environment.finalize((environment.getattr(l_2_b, 'x') + (environment.getattr(l_2_b, 'width') / 2)))),
                '" y="',
                escape(environment.finalize((environment.getattr(l_2_b, 'y') - 4))),
                '" text-anchor="middle">',
                escape(environment.finalize(t_1(environment.getattr(l_2_b, 'pairs')))),
                '</text>\n<text x="',
                escape(environment.finalize((environment.getattr(l_2_b, 'x') + (environment.getattr(l_2_b, 'width') / 2)))),
                '" y="',
                escape(environment.finalize((environment.getattr(l_1_h, 'base_y') + 16))),
                '" text-anchor="middle">',
                escape(environment.finalize(environment.getattr(l_2_b, 'label'))),
                '</text>\n</g>\n',
            ))
        l_2_b = missing
        t_4.extend((
            '<text class="muted" x="',
            escape(environment.finalize((environment.getattr(l_1_h, 'width') / 2))),
            '" y="',
            escape(environment.finalize((environment.getattr(l_1_h, 'height') - 2))),
            '" text-anchor="middle">score</text>\n</svg>\n',
        ))
        return concat(t_4)
    context.exported_vars.add('histogram')
    context.vars['histogram'] = l_0_histogram = Macro(environment, macro, 'histogram', ('h', 'id'), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_w, l_1_id):
        t_5 = []
        if l_1_w is missing:
            l_1_w = undefined("parameter 'w' was not provided", name='w')
        if l_1_id is missing:
            l_1_id = undefined("parameter 'id' was not provided", name='id')
        pass
        t_5.extend((
            '<svg role="img" aria-labelledby="',
            escape(environment.finalize(l_1_id)),
            '-t ',
            escape(environment.finalize(l_1_id)),
            '-d" viewBox="0 0 ',
            escape(environment.finalize(environment.getattr(l_1_w, 'width'))),
            ' ',
            escape(environment.finalize(environment.getattr(l_1_w, 'height'))),
            '" width="',
            escape(environment.finalize(environment.getattr(l_1_w, 'width'))),
            '" height="',
            escape(environment.finalize(environment.getattr(l_1_w, 'height'))),
            '" class="wtl">\n<title id="',
            escape(environment.finalize(l_1_id)),
            '-t">',
            escape(environment.finalize(environment.getattr(l_1_w, 'title'))),
            '</title>\n<desc id="',
            escape(environment.finalize(l_1_id)),
            '-d">',
            escape(environment.finalize(environment.getattr(l_1_w, 'description'))),
            '</desc>\n',
        ))
        for l_2_r in environment.getattr(l_1_w, 'rows'):
            _loop_vars = {}
            pass
            t_5.extend((
                '<g>\n<title>',
                escape(environment.finalize(environment.getattr(l_2_r, 'title'))),
                '</title>\n<text x="0" y="',
                escape(environment.finalize((environment.getattr(l_2_r, 'y') + 15))),
                '">',
                escape(environment.finalize(environment.getattr(l_2_r, 'label'))),
                '</text>\n',
            ))
            for l_3_s in environment.getattr(l_2_r, 'segments'):
                _loop_vars = {}
                pass
                if (environment.getattr(l_3_s, 'width') > 0):
                    pass
                    t_5.extend((
                        '<rect class="',
                        escape(environment.finalize(environment.getattr(l_3_s, 'kind'))),
                        '" x="',
                        escape(environment.finalize(environment.getattr(l_3_s, 'x'))),
                        '" y="',
                        escape(environment.finalize((environment.getattr(l_2_r, 'y') + 2))),
                        '" width="',
                        escape(environment.finalize(environment.getattr(l_3_s, 'width'))),
                        '" height="18"/>\n',
                    ))
            l_3_s = missing
            t_5.extend((
                '<text x="',
                escape(environment.finalize(((environment.getattr(environment.getitem(environment.getattr(l_2_r, 'segments'), -1), 'x') + environment.getattr(environment.getitem(environment.getattr(l_2_r, 'segments'), -1), 'width')) + 12))),
                '" y="',
                escape(environment.finalize((environment.getattr(l_2_r, 'y') + 15))),
                '">',
                escape(environment.finalize(t_1(environment.getattr(environment.getitem(environment.getattr(l_2_r, 'segments'), 0), 'pairs')))),
                ' / ',
                escape(environment.finalize(t_1(environment.getattr(environment.getitem(environment.getattr(l_2_r, 'segments'), 1), 'pairs')))),
                ' / ',
                escape(environment.finalize(t_1(environment.getattr(environment.getitem(environment.getattr(l_2_r, 'segments'), 2), 'pairs')))),
                '</text>\n</g>\n',
            ))
        l_2_r = missing
        t_5.append(
            '</svg>\n',
        )
        return concat(t_5)
    context.exported_vars.add('wins_ties_losses')
    context.vars['wins_ties_losses'] = l_0_wins_ties_losses = Macro(environment, macro, 'wins_ties_losses', ('w', 'id'), False, False, False, context.eval_ctx.autoescape)

blocks = {}
debug_info = '1=24&2=33&3=45&4=49&5=54&6=59&7=65&9=75&10=84&11=88&13=95&15=100&16=102&17=107&18=111&20=122&21=126&23=137&24=141&26=150&32=165&33=174&34=186&35=190&36=194&37=201&39=206&40=212&41=220&42=226&45=236&49=245&50=254&51=266&52=270&53=275&55=280&56=282&57=287&58=290&59=294&62=306'