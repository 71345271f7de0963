# Written for evalrun's compat corpus (not promptfoo's file): a system prompt chosen by the `role` var.
ROLES = {"support": "You are a patient support agent.", "sales": "You are a sales representative.",
         "technical": "You are a technical support engineer."}


def get_var(var_name, prompt, other_vars):
    return {"output": ROLES.get(other_vars.get("role"), ROLES["support"])}
