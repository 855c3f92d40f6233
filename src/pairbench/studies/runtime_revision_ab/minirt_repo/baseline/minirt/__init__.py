"""minirt: a small stdlib-only agent runtime (a tool loop over Chat Completions).

Run it as ``python -m minirt --workspace DIR --prompt-file FILE``; see ``__main__``.
"""

__version__ = "0.1.0"
