"""The evaluation API ("test before launch"), administrators only: question sets of an assistant
(`assistants/<aid>/eval-sets/`), a set's questions (add, import a CSV or JSONL text, approve drafted ones,
delete), its runs (start one: it answers in the background), a run with its answers and totals, an answer's
right/wrong mark, and two runs of one set compared question by question. Another account's ids are 404."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from captain.api.errors import service_errors_as_400
from captain.assistants.selectors import access_assistant
from captain.evaluation.api import serializers as s
from captain.evaluation.models import EvalQuestion, EvalRun, EvalSet
from captain.evaluation.selectors import (
    access_eval_answer,
    access_eval_question,
    access_eval_run,
    access_eval_set,
    eval_answers,
    eval_questions,
    eval_run_totals,
    eval_runs,
    eval_runs_compare,
    eval_set_list,
)
from captain.evaluation.services.drafts import eval_questions_draft_enqueue
from captain.evaluation.services.imports import ParsedQuestion
from captain.evaluation.services.runs import eval_answer_mark, eval_run_start
from captain.evaluation.services.sets import (
    eval_question_approve,
    eval_question_delete,
    eval_questions_add,
    eval_questions_import,
    eval_set_create,
    eval_set_delete,
    eval_set_rename,
)
from helpdesk.api.auth import AccountAdminApi, Pagination, paginated_response


class EvalSetCollectionApi(AccountAdminApi):
    """`GET` the assistant's question sets / `POST {name}` a new one."""

    pagination_class = Pagination

    @extend_schema(responses=s.EvalSetOutputSerializer(many=True))
    def get(self, request: Request, account_id: int, assistant_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        return paginated_response(
            request=request,
            view=self,
            queryset=eval_set_list(assistant=assistant),
            serializer_class=s.EvalSetOutputSerializer,
        )

    @extend_schema(request=s.EvalSetInputSerializer, responses={201: s.EvalSetOutputSerializer})
    def post(self, request: Request, account_id: int, assistant_id: int) -> Response:
        assistant = access_assistant(account_id=self.account_id, assistant_id=assistant_id)
        data = s.EvalSetInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        with service_errors_as_400():
            eval_set = eval_set_create(assistant=assistant, name=data.validated_data["name"])
        return Response(s.EvalSetOutputSerializer(eval_set).data, status=status.HTTP_201_CREATED)


class EvalSetDetailApi(AccountAdminApi):
    """`GET`, `PATCH {name}`, `DELETE` one set (deleting it deletes its questions, runs and marks)."""

    def _set(self, set_id: int) -> EvalSet:
        return access_eval_set(account_id=self.account_id, set_id=set_id)

    @extend_schema(responses=s.EvalSetOutputSerializer)
    def get(self, request: Request, account_id: int, set_id: int) -> Response:
        return Response(s.EvalSetOutputSerializer(self._set(set_id)).data)

    @extend_schema(request=s.EvalSetInputSerializer, responses=s.EvalSetOutputSerializer)
    def patch(self, request: Request, account_id: int, set_id: int) -> Response:
        eval_set = self._set(set_id)
        data = s.EvalSetInputSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        if "name" in data.validated_data:  # a PATCH of {} changes nothing and answers the set
            with service_errors_as_400():
                eval_set = eval_set_rename(eval_set=eval_set, name=data.validated_data["name"])
        return Response(s.EvalSetOutputSerializer(eval_set).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, account_id: int, set_id: int) -> Response:
        eval_set_delete(eval_set=self._set(set_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


def _added(added: list[EvalQuestion]) -> Response:
    # An object, not a bare list: the collection's GET is paginated, and a list here would read as a page.
    body = {"count": len(added), "questions": s.EvalQuestionOutputSerializer(added, many=True).data}
    return Response(body, status=status.HTTP_201_CREATED)


class EvalQuestionCollectionApi(AccountAdminApi):
    """`GET` a set's questions / `POST {questions: [{question, expected, previous}]}` to add them (approved)."""

    pagination_class = Pagination

    @extend_schema(responses=s.EvalQuestionOutputSerializer(many=True))
    def get(self, request: Request, account_id: int, set_id: int) -> Response:
        eval_set = access_eval_set(account_id=self.account_id, set_id=set_id)
        return paginated_response(
            request=request,
            view=self,
            queryset=eval_questions(eval_set=eval_set),
            serializer_class=s.EvalQuestionOutputSerializer,
        )

    @extend_schema(request=s.EvalQuestionsAddSerializer, responses={201: s.EvalQuestionsAddedSerializer})
    def post(self, request: Request, account_id: int, set_id: int) -> Response:
        eval_set = access_eval_set(account_id=self.account_id, set_id=set_id)
        data = s.EvalQuestionsAddSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        parsed = [
            ParsedQuestion(q["question"], q.get("expected", ""), [dict(t) for t in q.get("previous", [])])
            for q in data.validated_data["questions"]
        ]
        with service_errors_as_400():
            added = eval_questions_add(eval_set=eval_set, questions=parsed, origin="typed")
        return _added(added)


class EvalQuestionImportApi(AccountAdminApi):
    """`POST {format: csv|jsonl, content}`: import a file's questions, all or none; a 400 names every bad line."""

    @extend_schema(request=s.EvalImportSerializer, responses={201: s.EvalQuestionsAddedSerializer})
    def post(self, request: Request, account_id: int, set_id: int) -> Response:
        eval_set = access_eval_set(account_id=self.account_id, set_id=set_id)
        data = s.EvalImportSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        with service_errors_as_400():
            added = eval_questions_import(
                eval_set=eval_set,
                file_name=f"import.{data.validated_data['format']}",
                data=data.validated_data["content"].encode(),
            )
        return _added(added)


class EvalQuestionDraftApi(AccountAdminApi):
    """`POST`: queue drafting questions from the assistant's ready documents (202; they arrive unapproved)."""

    @extend_schema(request=None, responses={202: None})
    def post(self, request: Request, account_id: int, set_id: int) -> Response:
        eval_questions_draft_enqueue(eval_set=access_eval_set(account_id=self.account_id, set_id=set_id))
        return Response(status=status.HTTP_202_ACCEPTED)


class EvalQuestionDetailApi(AccountAdminApi):
    """`DELETE` one question (and the answers runs gave to it)."""

    @extend_schema(responses={204: None})
    def delete(self, request: Request, account_id: int, set_id: int, question_id: int) -> Response:
        eval_set = access_eval_set(account_id=self.account_id, set_id=set_id)
        eval_question_delete(question=access_eval_question(eval_set=eval_set, question_id=question_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class EvalQuestionApproveApi(AccountAdminApi):
    """`POST`: approve a drafted question: the next runs ask it."""

    @extend_schema(request=None, responses=s.EvalQuestionOutputSerializer)
    def post(self, request: Request, account_id: int, set_id: int, question_id: int) -> Response:
        eval_set = access_eval_set(account_id=self.account_id, set_id=set_id)
        question = eval_question_approve(
            question=access_eval_question(eval_set=eval_set, question_id=question_id)
        )
        return Response(s.EvalQuestionOutputSerializer(question).data)


class EvalRunCollectionApi(AccountAdminApi):
    """`GET` a set's runs, newest first / `POST {label}` to start one (202: it answers in the background)."""

    pagination_class = Pagination

    @extend_schema(responses=s.EvalRunOutputSerializer(many=True))
    def get(self, request: Request, account_id: int, set_id: int) -> Response:
        eval_set = access_eval_set(account_id=self.account_id, set_id=set_id)
        return paginated_response(
            request=request,
            view=self,
            queryset=eval_runs(eval_set=eval_set),
            serializer_class=s.EvalRunOutputSerializer,
        )

    @extend_schema(request=s.EvalRunStartSerializer, responses={202: s.EvalRunOutputSerializer})
    def post(self, request: Request, account_id: int, set_id: int) -> Response:
        eval_set = access_eval_set(account_id=self.account_id, set_id=set_id)
        data = s.EvalRunStartSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        with service_errors_as_400():
            run = eval_run_start(eval_set=eval_set, label=data.validated_data["label"])
        return Response(s.EvalRunOutputSerializer(run).data, status=status.HTTP_202_ACCEPTED)


def run_detail(run: EvalRun) -> dict[str, Any]:
    data = dict(s.EvalRunOutputSerializer(run).data)
    data["answers"] = s.EvalAnswerOutputSerializer(eval_answers(run=run), many=True).data
    data["totals"] = s.EvalTotalsSerializer(eval_run_totals(run=run)).data
    return data


class EvalRunDetailApi(AccountAdminApi):
    """`GET` one run: its configuration snapshot, status, every answer (reply, sources, verdict, mark), totals."""

    @extend_schema(responses=s.EvalRunDetailSerializer)
    def get(self, request: Request, account_id: int, run_id: int) -> Response:
        return Response(run_detail(access_eval_run(account_id=self.account_id, run_id=run_id)))


class EvalAnswerMarkApi(AccountAdminApi):
    """`POST {mark: right|wrong|unmarked, note}`: the administrator's judgement of one answer."""

    @extend_schema(request=s.EvalMarkSerializer, responses=s.EvalAnswerOutputSerializer)
    def post(self, request: Request, account_id: int, run_id: int, answer_id: int) -> Response:
        run = access_eval_run(account_id=self.account_id, run_id=run_id)
        answer = access_eval_answer(run=run, answer_id=answer_id)
        data = s.EvalMarkSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        with service_errors_as_400():
            answer = eval_answer_mark(
                answer=answer,
                mark=data.validated_data["mark"],
                user_id=request.user.pk,
                note=data.validated_data.get("note"),
            )
        return Response(s.EvalAnswerOutputSerializer(answer).data)


class EvalRunCompareApi(AccountAdminApi):
    """`GET` two runs of one set side by side, question by question, with what changed (404 for two sets)."""

    @extend_schema(responses=s.EvalCompareSerializer)
    def get(self, request: Request, account_id: int, run_id: int, other_run_id: int) -> Response:
        left = access_eval_run(account_id=self.account_id, run_id=run_id)
        right = access_eval_run(account_id=self.account_id, run_id=other_run_id)
        rows = eval_runs_compare(left=left, right=right)
        return Response(
            {
                "left": s.EvalRunOutputSerializer(left).data,
                "right": s.EvalRunOutputSerializer(right).data,
                "questions": s.EvalComparedSerializer(
                    [
                        {"question": r.question, "left": r.left, "right": r.right, "changes": r.changes}
                        for r in rows
                    ],
                    many=True,
                ).data,
            }
        )
