"""The web application (``coderiv serve``): a check page (upload or paste a document, ranked
matches with absolute percentages, verified passages), the collection and its documents'
pages, and a JSON API described at ``/docs``.

Modules: :mod:`~coderiv.web.app` (the factory and error handling), :mod:`~coderiv.web.pages` and
:mod:`~coderiv.web.api` (routes), :mod:`~coderiv.web.checks` (one check), :mod:`~coderiv.web.snapshot`
(the live index generation), :mod:`~coderiv.web.pool` (worker threads and admission),
:mod:`~coderiv.web.jobs` (checks the page follows), :mod:`~coderiv.web.security` (token, body
limit, headers), :mod:`~coderiv.web.inputs` (uploads), :mod:`~coderiv.web.views` (collection data).
Needs the extra ``coderiv[web]``.
"""
