# Written for evalrun's compat corpus: upper-cases the output, as the example's transform does.
def func_name(output, context):
    return output.upper()
