"""A stand-in for the application under test: canned answers taken from the documentation it was given."""

ANSWERS = {
    "How do I reset my password?": "Reset your password from the login page with the Forgot password link. "
                                   "The reset link expires after 24 hours.",
    "How long do I have to ask for a refund?": "Refunds are accepted within 30 days of purchase.",
}


def call_api(prompt, options, context):
    question = context["vars"]["question"]
    return {"output": ANSWERS.get(question, "I do not know.")}
