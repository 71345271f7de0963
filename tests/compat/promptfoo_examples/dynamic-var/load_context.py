# Written for evalrun's compat corpus (not promptfoo's file): promptfoo's get_var protocol, a fake retrieval.
def get_var(var_name, prompt, other_vars):
    return {"output": f"<Documents similar to {other_vars['question']}>"}
