from django.contrib.auth.management import create_permissions
from django.db import migrations

APPROVERS_GROUP = "Bypass approvers"
APPROVE_CODENAME = "approve_paretobypass"


def create_group(apps, schema_editor):
    # Permissions are otherwise only created after all migrations ran (post_migrate); the
    # group needs the row now.
    app_config = apps.get_app_config("curves")
    app_config.models_module = True
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    permission = Permission.objects.get(
        content_type__app_label="curves", codename=APPROVE_CODENAME
    )
    group, _ = Group.objects.get_or_create(name=APPROVERS_GROUP)
    group.permissions.add(permission)


def delete_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name=APPROVERS_GROUP).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("curves", "0003_pareto_bypass"),
    ]

    operations = [migrations.RunPython(create_group, delete_group)]
