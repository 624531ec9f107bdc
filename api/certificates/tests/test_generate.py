"""POST /api/v1/certificates/generate/: a new key and a self-signed certificate."""

from datetime import timedelta

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.test import APIClient, APITestCase

from certificates import crypto, validators
from certificates.models import Certificate
from certificates.tests.test_api import SecretAssertions

URL = "/api/v1/certificates/generate/"


class GenerateTest(SecretAssertions, APITestCase):
    def setUp(self):
        self.client.force_authenticate(get_user_model().objects.create_superuser("g", password="correct horse battery"))

    def generate(self, **body):
        return self.client.post(URL, {"name": "self", "common_name": "www.example.com", **body}, format="json")

    def test_each_key_type(self):
        for key_type in ["rsa-2048", "rsa-4096", "ecdsa-p256", "ecdsa-p384"]:
            response = self.generate(name=key_type, key_type=key_type, days=30, description="lab")
            self.assertEqual(response.status_code, 201, response.data)
            data = response.data
            self.assertEqual(data["key_type"], key_type)
            self.assertEqual((data["has_key"], data["is_ca"]), (True, False))
            self.assertEqual(data["subject"], "CN=www.example.com")
            self.assertEqual(data["issuer"], data["subject"])
            self.assertEqual(data["sans"], ["www.example.com"])
            self.assertEqual(data["description"], "lab")
            self.assertEqual(data["expires_in_days"], 29)
            self.assert_no_key(response)
            stored = Certificate.objects.get(pk=data["id"])
            self.assertEqual(data["warnings"], [f"expires in 29 days, on {stored.not_after:%Y-%m-%d}: renew it"])
            # What generate stores passes the checks an upload must pass.
            validators.validate_content(stored.certificate, "", stored.private_key, "", now=timezone.now())

    def test_same_representation_as_create(self):
        generated = self.generate().data
        listed = self.client.get(f"/api/v1/certificates/{generated['id']}/").data
        self.assertEqual(generated, listed)

    def test_defaults(self):
        data = self.generate().data
        self.assertEqual(data["key_type"], "rsa-2048")
        self.assertEqual(data["expires_in_days"], 364)

    def test_sans_dns_wildcard_and_ips(self):
        sans = ["example.com", "*.example.com", "192.0.2.10", "2001:db8::1"]
        response = self.generate(common_name="example.com", sans=sans, key_type="ecdsa-p256")
        self.assertEqual(response.status_code, 201, response.data)
        self.assertEqual(response.data["sans"], sans)
        certificate = x509.load_pem_x509_certificate(Certificate.objects.get().certificate.encode())
        self.assertEqual(crypto.subject_alt_names(certificate), sans)
        usage = certificate.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
        self.assertEqual([u.dotted_string for u in usage], ["1.3.6.1.5.5.7.3.1"])  # serverAuth

    def test_ip_common_name(self):
        response = self.generate(common_name="10.0.0.1")
        self.assertEqual(response.status_code, 201, response.data)
        self.assertEqual(response.data["sans"], ["10.0.0.1"])

    def test_key_matches_and_validity_covers_now(self):
        before = timezone.now()
        self.generate(days=3650, key_type="ecdsa-p384")
        stored = Certificate.objects.get()
        key = serialization.load_pem_private_key(stored.private_key.encode(), None)
        (leaf,) = crypto.load_certificates(stored.certificate)
        self.assertTrue(crypto.key_matches(key, leaf))
        self.assertLess(stored.not_before, before)
        self.assertAlmostEqual(stored.not_after, before + timedelta(days=3650), delta=timedelta(minutes=1))

    def test_bad_input_is_refused(self):
        Certificate.objects.create(name="taken", **_generated())
        cases = [
            ({"common_name": "bad name"}, "common_name"),
            ({"common_name": "a" * 65}, "common_name"),
            ({"common_name": "x\nCN=evil"}, "common_name"),
            ({"common_name": "*.*.example.com"}, "common_name"),
            ({"sans": ["ok.example.com", "not ok"]}, "sans"),
            ({"sans": "www.example.com"}, "sans"),
            ({"sans": ["10.0.0.300"]}, "sans"),
            ({"key_type": "dsa-1024"}, "key_type"),
            ({"key_type": "rsa-1024"}, "key_type"),
            ({"days": 0}, "days"),
            ({"days": 3651}, "days"),
            ({"name": "taken"}, "name"),
            ({"name": "bad name"}, "name"),
            ({"private_key": "-----BEGIN PRIVATE KEY-----"}, "private_key"),  # unknown here
            ({"description": "d" * 201}, "description"),
        ]
        for body, field in cases:
            response = self.generate(**body)
            self.assertEqual(response.status_code, 400, (body, response.data))
            self.assertIn(field, response.data, body)
        self.assertEqual(self.client.post(URL, {"name": "x"}, format="json").data["common_name"][0].code, "required")
        self.assertEqual(Certificate.objects.count(), 1)

    def test_anonymous_is_refused(self):
        self.assertIn(APIClient().post(URL, {"name": "x", "common_name": "x.example"}).status_code, (401, 403))
        self.assertFalse(Certificate.objects.exists())


def _generated(common_name="taken.example.com", key_type="ecdsa-p256"):
    certificate, private_key = crypto.generate_self_signed(common_name, [common_name], key_type, 30, timezone.now())
    return {"certificate": certificate, "private_key": private_key}
