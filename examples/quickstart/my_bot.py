"""my_bot.py: your bot, as an evalrun provider. Replace `answer` with a call into your own code."""

DOCS = [
    "Customers can return an item within 30 days of delivery for a full refund.",
    "Refunds are paid to the original payment method within 5 business days.",
    "Standard shipping takes 3 to 5 business days; express shipping arrives the next business day.",
]


def answer(question: str) -> tuple[str, list[str]]:
    """A stand-in: retrieve the two chunks sharing most words with the question, answer with the best one."""
    words = set(question.lower().split())
    chunks = sorted(DOCS, key=lambda doc: -len(words & set(doc.lower().split())))[:2]
    return chunks[0], chunks


def call_api(prompt, options, context):
    """Called once per test case with the rendered prompt: the answer and the chunks it was built from."""
    text, chunks = answer(prompt)
    return {"output": text, "metadata": {"retrieved": chunks}}
