from django import forms
from django.utils import timezone


class GenerateTokenForm(forms.Form):
    label = forms.CharField(max_length=100, help_text="What the token is for, e.g. “CI pipeline”.")
    expires_at = forms.DateField(
        required=False, label="Expires on", widget=forms.DateInput(attrs={"type": "date"}),
        help_text="Leave empty for a token that does not expire.",
    )

    def clean_expires_at(self):
        expires_on = self.cleaned_data["expires_at"]
        if expires_on and expires_on < timezone.now().date():
            raise forms.ValidationError("The expiry date is in the past.")
        return expires_on
