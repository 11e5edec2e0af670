"""Django admin for operators. Space uses guardian's GuardedModelAdmin, so object permissions
(`memory.operate_space`) are assigned per space from its "Object permissions" page. Grants,
receipts and memory content are not edited here: the ops layer is their only writer, so their
admin pages are read-only (grants) or absent (records, candidates)."""

from django.contrib import admin
from django.http import HttpRequest
from guardian.admin import GuardedModelAdmin

from memory.models import ApiToken, Grant, Principal, Space


@admin.register(Space)
class SpaceAdmin(GuardedModelAdmin):
    list_display = ["space_id", "display_name", "state", "revision"]
    search_fields = ["space_id", "display_name"]
    # state, freeze and revisions move only through the ops (memory.spaces.freeze/unfreeze).
    readonly_fields = [
        "state",
        "freeze_reason",
        "revision",
        "authority_generation",
        "created_at",
        "updated_at",
    ]

    def get_readonly_fields(
        self, request: HttpRequest, obj: Space | None = None
    ) -> list[str] | tuple[str, ...]:
        return [*self.readonly_fields, *(["space_id"] if obj else [])]


class TokenInline(admin.TabularInline):
    model = ApiToken
    fields = ["label", "created_at", "revoked_at"]
    readonly_fields = ["label", "created_at"]
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Principal | None = None) -> bool:
        return False  # a token's clear value is shown once: issue it from the console or CLI


@admin.register(Principal)
class PrincipalAdmin(admin.ModelAdmin):
    list_display = ["principal_id", "display_name", "kind", "user"]
    search_fields = ["principal_id", "display_name", "user__username"]
    readonly_fields = ["principal_id", "created_at"]
    inlines = [TokenInline]


@admin.register(Grant)
class GrantAdmin(admin.ModelAdmin):
    list_display = ["grant_id", "space", "grantee", "state", "created_at"]
    list_filter = ["state"]
    search_fields = ["grant_id", "grantee__principal_id"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Grant | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Grant | None = None) -> bool:
        return False
