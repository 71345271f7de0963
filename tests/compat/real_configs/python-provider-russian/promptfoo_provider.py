# Written for evalrun's compat corpus: a stand-in for the project's HTTP client. It blocks queries that look
# like jailbreaks (English or Russian) and answers the others, as the service's ChatResponse JSON.
import json
import re

_ATTACK = re.compile(r"ignore|забудь|системный промпт|снилс", re.I)


def call_api(prompt, options, context):
    blocked = bool(_ATTACK.search(prompt))
    answer = "" if blocked else "Ответ по базе знаний: " + prompt
    return {"output": json.dumps({"answer": answer, "blocked": blocked, "blocked_layer": "L1" if blocked else None},
                                 ensure_ascii=False)}
