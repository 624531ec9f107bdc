"""Deleting a certificate that a service or pool refers to is refused with 409, naming them.

Certificate.users() walks ``_meta.related_objects``, so every relation the services app
declares (default certificate, SNI certificates, client CA, pool CA) is covered here.
"""

from django.contrib.auth import get_user_model
from rest_framework.test import APITestCase

from certificates.models import Certificate
from certificates.tests import pki
from services.models import Pool, VirtualService


class InUseTest(APITestCase):
    def setUp(self):
        self.client.force_authenticate(get_user_model().objects.create_superuser("ops", password="x" * 12))
        chain = pki.Chain()
        self.cert = Certificate.objects.create(
            name="web", certificate=pki.cert_pem(chain.leaf), private_key=pki.key_pem(chain.leaf_key)
        )
        self.url = f"/api/v1/certificates/{self.cert.pk}/"
        self.pool = Pool.objects.create(name="api")

    def _service(self, name, port, **fields):
        return VirtualService.objects.create(
            name=name, vip="10.0.0.1", port=port, protocol="https", default_pool=self.pool, **fields
        )

    def assert_refused(self, message):
        response = self.client.delete(self.url)
        self.assertEqual(response.status_code, 409, response.data)
        self.assertEqual(response.data["detail"], message)
        self.assertTrue(Certificate.objects.filter(pk=self.cert.pk).exists())

    def test_default_certificate(self):
        self._service("shop", 443, default_certificate=self.cert)
        self.assert_refused("still in use by: virtual service shop")

    def test_sni_certificate(self):
        self._service("shop", 443).sni_certificates.add(self.cert)
        self.assert_refused("still in use by: virtual service shop")

    def test_client_ca(self):
        self._service("mtls", 8443, client_ca=self.cert)
        self.assert_refused("still in use by: virtual service mtls")

    def test_pool_ca(self):
        Pool.objects.filter(pk=self.pool.pk).update(tls_ca=self.cert)
        self.assert_refused("still in use by: pool api")

    def test_every_user_is_named_once(self):
        shop = self._service("shop", 443, default_certificate=self.cert)
        shop.sni_certificates.add(self.cert)
        self._service("mtls", 8443, client_ca=self.cert)
        Pool.objects.filter(pk=self.pool.pk).update(tls_ca=self.cert)
        self.assert_refused("still in use by: pool api, virtual service mtls, virtual service shop")

    def test_unused_certificate_is_deleted(self):
        self.assertEqual(self.client.delete(self.url).status_code, 204)
        self.assertFalse(Certificate.objects.filter(pk=self.cert.pk).exists())
