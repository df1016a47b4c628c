"""`/`, the first page anyone opens: the caller's projects, or the login page that leads there."""

from tests.factories import PASSWORD, UserFactory


def test_logged_out_it_leads_to_the_login_page_then_the_projects(client, db):
    user = UserFactory(username="ada")
    response = client.get("/")
    assert (response.status_code, response["Location"]) == (302, "/accounts/login/?next=/projects/")

    logged_in = client.post(response["Location"], {"username": user.username, "password": PASSWORD})
    assert (logged_in.status_code, logged_in["Location"]) == (302, "/projects/")


def test_logged_in_it_leads_to_the_projects(client, db):
    client.force_login(UserFactory())
    response = client.get("/", follow=True)

    assert (response.redirect_chain, response.status_code) == ([("/projects/", 302)], 200)
    assert response.templates[0].name == "tickets/project_list.html"
