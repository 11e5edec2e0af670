"""The review console, mounted at /console/."""

from django.urls import path

from reviews.views import (
    auth,
    candidate,
    exports,
    grants,
    home,
    imports,
    operate,
    queue,
    recent,
    records,
    reflections,
    space,
    subjects,
)

app_name = "reviews"
S = "s/<str:space_id>/"
R = S + "subjects/<str:subject_id>/reflections/"
urlpatterns = [
    path("", home.home, name="home"),
    path("login/", auth.LoginView.as_view(), name="login"),
    path("logout/", auth.LogoutView.as_view(), name="logout"),
    path(S + "queue/", queue.queue, name="queue"),
    path(S + "queue/bulk/", queue.bulk, name="queue_bulk"),
    path(S + "recent/", recent.recent, name="recent"),
    path(S + "recent/<str:receipt_id>/undo/", recent.undo, name="undo"),
    path(S + "candidates/<str:candidate_id>/", candidate.candidate, name="candidate"),
    path(S + "candidates/<str:candidate_id>/review/", candidate.review, name="review"),
    path(S + "subjects/", subjects.subjects, name="subjects"),
    path(S + "records/", records.records, name="records"),
    path(S + "records/<str:record_id>/", records.record, name="record"),
    path(S + "records/<str:record_id>/edit/", records.edit, name="record_edit"),
    path(S + "records/<str:record_id>/delete/", records.delete, name="record_delete"),
    path(S + "grants/", grants.grants, name="grants"),
    path(S + "grants/issue/", grants.issue, name="grant_issue"),
    path(S + "grants/<str:grant_id>/revoke/", grants.revoke, name="grant_revoke"),
    path(S + "space/", space.space, name="space"),
    path(S + "space/pending/", space.pending, name="space_pending"),
    path(S + "space/freeze/", space.freeze, name="space_freeze"),
    path(S + "space/unfreeze/", space.unfreeze, name="space_unfreeze"),
    path(S + "space/fence/", space.fence, name="space_fence"),
    path(R, reflections.reflections, name="reflections"),
    path(R + "generate/", reflections.generate, name="reflections_generate"),
    path(R + "receipts/<str:receipt_id>/", reflections.progress, name="reflections_progress"),
    path(S + "exports/", exports.exports, name="exports"),
    path(S + "exports/create/", exports.create, name="exports_create"),
    path(S + "exports/<str:receipt_id>/", exports.item, name="export"),
    path(S + "exports/<str:receipt_id>/download/", exports.download, name="export_download"),
    path(S + "imports/", imports.imports, name="imports"),
    path(S + "imports/stage/", imports.stage, name="imports_stage"),
    path(S + "imports/activate/", imports.activate, name="imports_activate"),
    path(S + "imports/<str:receipt_id>/", imports.progress, name="import_progress"),
    path("operate/<str:space_id>/", operate.operate, name="operate"),
    path("operate/<str:space_id>/principals/", operate.create_principal, name="operate_principal"),
    path("operate/<str:space_id>/tokens/", operate.issue_token, name="operate_token"),
    path(
        "operate/<str:space_id>/tokens/revoke/", operate.revoke_token, name="operate_revoke_token"
    ),
    path("operate/<str:space_id>/root-grants/", operate.root_grant, name="operate_root"),
    path("operate/<str:space_id>/agents/", operate.create_agent, name="operate_agent"),
]
