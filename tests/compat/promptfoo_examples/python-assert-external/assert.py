# Written for evalrun's compat corpus: the example's assertion (the output names bananas).
def get_assert(output, context):
    return "bananas" in output.lower()
