# Schemathesis hooks for test/http/contract-fuzz.test.ts. The run's own organization, dataset, user
# and key (FUZZ_PROTECTED_IDS, comma-separated) must outlive it,
# with the owner role the run was given:
# - a DELETE of one of them is sent for a fresh random id instead, which the service answers as any
#   unknown id (404), so the rest of the run keeps its credentials;
# - PUT /api/user for the run's own user (by its id, or without one, which means the caller) keeps
#   the owner role and every route, so it still changes something and still succeeds.
import ast
import os
import threading
import uuid

import schemathesis

PROTECTED = {value for value in os.environ.get("FUZZ_PROTECTED_IDS", "").split(",") if value}


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    method = case.operation.method.upper()
    if method == "DELETE" and case.path_parameters:
        for name, value in list(case.path_parameters.items()):
            if str(value) in PROTECTED:
                case.path_parameters[name] = str(uuid.uuid4())
    if method == "PUT" and case.operation.path == "/api/user" and isinstance(case.body, dict):
        user_id = case.body.get("user_id")
        if user_id is None or str(user_id) in PROTECTED:
            case.body["role"] = 2
            case.body["scopes"] = []


# CPython 3.11's ast.parse is not safe across threads ("AST constructor recursion depth mismatch",
# python/cpython#106905), and Hypothesis parses source (lambda_sources, reflection) to describe the
# strategies schemathesis' workers build at once, which it then reports as a FlakyFailure. Every
# parse goes through one lock, so the parses are the same as in a single thread.
def _one_at_a_time(parse):
    lock = threading.RLock()

    def locked(*args, **kwargs):
        with lock:
            return parse(*args, **kwargs)

    return locked


ast.parse = _one_at_a_time(ast.parse)
