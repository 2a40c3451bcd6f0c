"""Query sources: how a conversation turn becomes the text that is searched.

The benchmark's own renderings (``lastturn``, ``rewrite``, ``questions``) live
here; the rewrite strategies register further sources under their names.
"""

from .sources import QUERY_SOURCES, QuerySource, make_query_source

__all__ = ["QUERY_SOURCES", "QuerySource", "make_query_source"]
