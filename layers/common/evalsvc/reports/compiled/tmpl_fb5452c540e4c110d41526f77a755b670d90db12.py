from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'base.html.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_csp = resolve('csp')
    l_0_css = resolve('css')
    pass
    yield '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<meta http-equiv="Content-Security-Policy" content="'
    yield escape(environment.finalize((undefined(name='csp') if l_0_csp is missing else l_0_csp)))
    yield '">\n<meta name="referrer" content="no-referrer">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>'
    yield from context.blocks['title'][0](context)
    yield '</title>\n<style>'
    yield escape(environment.finalize((undefined(name='css') if l_0_css is missing else l_0_css)))
    yield '</style>\n</head>\n<body>\n<header>\n'
    yield from context.blocks['header'][0](context)
    yield '</header>\n<main>\n'
    yield from context.blocks['main'][0](context)
    yield '</main>\n<footer>\nThis page is self-contained: it loads nothing and runs no script. Texts from datasets, metrics,\njudges and reviewers are shown as written, cut where long, with their length.\n</footer>\n</body>\n</html>'

def block_title(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    pass

def block_header(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    pass

def block_main(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    pass

blocks = {'title': block_title, 'header': block_header, 'main': block_main}
debug_info = '5=14&8=16&9=18&13=20&16=22&8=25&13=34&16=43'