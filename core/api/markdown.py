"""POST /api/v1/markdown: Markdown rendered and sanitized by the one renderer the service shows it with
(core/markdown.py), for a client's preview of what it is about to save: any signed-in caller, no project."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from core.api.base import ApiViewSet
from core.api.inputs import validated
from core.api.schema import envelope, error_responses
from core.markdown import render_markdown

# The longest Markdown the service keeps anywhere: a ticket's description.
MAX_MARKDOWN = 100_000


class MarkdownInput(serializers.Serializer):
    text = serializers.CharField(allow_blank=True, trim_whitespace=False, max_length=MAX_MARKDOWN)


class MarkdownViewSet(ApiViewSet):
    @extend_schema(description="The HTML the service shows for this Markdown (descriptions, comments, articles): "
                               "raw HTML escaped, then sanitized (no script, style or event attribute; links "
                               "http(s), mailto or relative); GFM task lists as disabled checkboxes. Nothing is "
                               "stored.",
                   request=MarkdownInput,
                   responses={200: envelope("MarkdownRendered", html=serializers.CharField()),
                              **error_responses(401, 422)})
    def render(self, request):
        """Render Markdown (a preview)."""
        return Response({"html": render_markdown(validated(MarkdownInput, request.data)["text"])})
