"""Field validators every app shares (names, interfaces, ports, texts), built from the
compiler's rules, so the API accepts what it can render."""

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator

from compiler import rules

validate_name = RegexValidator(rules.NAME_RE, rules.NAME_HELP)
validate_interface = RegexValidator(rules.INTERFACE_RE, rules.INTERFACE_HELP)
validate_dns_name = RegexValidator(rules.DNS_NAME_RE, "A domain name such as www.example.com, or '.'.")
validate_check_script = RegexValidator(rules.CHECK_SCRIPT_RE, rules.CHECK_SCRIPT_HELP.replace("%", "%%"))
validate_http_path = RegexValidator(rules.HTTP_PATH_RE, rules.HTTP_PATH_HELP)
validate_host = RegexValidator(rules.HOST_RE, "Enter a DNS host name such as www.example.com.")
port_validators = [MinValueValidator(rules.PORT_MIN), MaxValueValidator(rules.PORT_MAX)]
weight_validators = [MinValueValidator(rules.WEIGHT_MIN), MaxValueValidator(rules.WEIGHT_MAX)]
status_validators = [MinValueValidator(rules.HTTP_STATUS_MIN), MaxValueValidator(rules.HTTP_STATUS_MAX)]
rise_fall_validators = [MinValueValidator(1), MaxValueValidator(rules.CHECK_RISE_FALL_MAX)]
interval_validators = [
    MinValueValidator(rules.CHECK_INTERVAL_MS_MIN),
    MaxValueValidator(rules.CHECK_INTERVAL_MS_MAX),
]
validate_field_name = RegexValidator(rules.FIELD_NAME_RE, rules.FIELD_NAME_HELP)
validate_sni = RegexValidator(rules.SNI_RE, "A host name, or @host to send the client's Host.")
timeout_validators = [MinValueValidator(rules.TIMEOUT_MS_MIN), MaxValueValidator(rules.TIMEOUT_MS_MAX)]
maxconn_validators = [MinValueValidator(0), MaxValueValidator(rules.MAXCONN_MAX)]


def validate_text(value):
    """A value written inside HAProxy's strong quotes (see compiler.rules.TEXT_RE)."""
    if value and not rules.TEXT_RE.match(value):
        raise ValidationError(rules.TEXT_HELP)
