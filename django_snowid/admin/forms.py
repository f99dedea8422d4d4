from __future__ import annotations

import re
from typing import Any, cast

from django import forms

from ..readings import reading_choices

MAX_IDS = 1000
_SEPARATORS = re.compile(r"[\s,;]+")


class DecodeForm(forms.Form):
    ids = forms.CharField(
        label="Ids or order numbers",
        help_text="One or many, separated by spaces, commas or new lines (at most 1,000).",
        widget=forms.Textarea(attrs={"rows": 4, "cols": 60, "autofocus": True}),
        max_length=MAX_IDS * 64,
    )
    reading = forms.ChoiceField(label="Read them as", required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["reading"]).choices = reading_choices()

    def clean_ids(self) -> list[str]:
        tokens = [t for t in _SEPARATORS.split(self.cleaned_data["ids"]) if t]
        if not tokens:
            raise forms.ValidationError("Enter at least one id.", code="empty")
        if len(tokens) > MAX_IDS:
            raise forms.ValidationError(
                "At most %(max)s ids at once; got %(count)s.",
                code="too_many",
                params={"max": f"{MAX_IDS:,}", "count": f"{len(tokens):,}"},
            )
        return tokens
