// Users and roles: the lists, a form to create or edit a user (password, admin
// channels, admin roles, disabled), and each user's effective channels with where
// each comes from (admin grant, a role, a document's access() grant); create or
// update a role (its admin channels).
import { h, mount, note, field } from "./dom.js";
import { api, reason, path } from "./api.js";

const list = text => text.split(",").map(item => item.trim()).filter(Boolean);

export async function render({ main, db, rest, navigate, href }) {
  const names = await api("GET", path(db, "_user") + "/");
  if (!names.ok) { mount(main, h("h2", {}, `Users of ${db}`), note("error", reason(names))); return; }
  const roleNames = await api("GET", path(db, "_role") + "/");
  const users = await Promise.all(names.json.map(name => api("GET", path(db, "_user", name)).then(result => result.json)));
  const roles = roleNames.ok ? await Promise.all(roleNames.json.map(name => api("GET", path(db, "_role", name)).then(result => result.json))) : [];
  const roleChannels = Object.fromEntries(roles.filter(Boolean).map(role => [role.name, role.all_channels || role.admin_channels || []]));
  const editing = users.find(user => user && user.name === rest[0]);

  const name = h("input", { id: "user-name", value: editing ? editing.name : "", readonly: editing ? true : null });
  const password = h("input", { id: "user-password", type: "password", placeholder: editing ? "unchanged" : "" });
  const channels = h("input", { id: "user-channels", value: editing ? (editing.admin_channels || []).join(", ") : "", placeholder: "a, b, c" });
  const userRoles = h("input", { id: "user-roles", value: editing ? (editing.admin_roles || []).join(", ") : "" });
  const disabled = h("input", { type: "checkbox", id: "user-disabled", checked: editing && editing.disabled ? true : null });
  const message = h("div", { id: "user-message" });
  const save = async () => {
    if (!name.value.trim()) { mount(message, note("error", "A user needs a name.")); return; }
    const body = { name: name.value.trim(), admin_channels: list(channels.value), admin_roles: list(userRoles.value), disabled: disabled.checked };
    if (password.value) body.password = password.value;
    const result = await api("PUT", path(db, "_user", body.name), body);
    if (!result.ok) { mount(message, note("error", reason(result))); return; }
    navigate(href("users", db, body.name));
  };
  const remove = async () => {
    if (!editing || !confirm(`Delete user ${editing.name}?`)) return;
    const result = await api("DELETE", path(db, "_user", editing.name));
    if (result.ok) navigate(href("users", db)); else mount(message, note("error", reason(result)));
  };

  const roleName = h("input", { id: "role-name", placeholder: "role name" });
  const roleChannelsInput = h("input", { id: "role-channels", placeholder: "channels, comma-separated" });
  const roleMessage = h("div");
  const saveRole = async () => {
    const nameText = roleName.value.trim();
    if (!nameText) { mount(roleMessage, note("error", "A role needs a name.")); return; }
    const result = await api("PUT", path(db, "_role", nameText), { name: nameText, admin_channels: list(roleChannelsInput.value) });
    if (result.ok) navigate(href("users", db, ...(editing ? [editing.name] : []))); else mount(roleMessage, note("error", reason(result)));
  };

  const origins = user => {
    const admin = new Set(user.admin_channels || []);
    const viaRole = {};
    for (const role of user.roles || []) for (const channel of roleChannels[role] || []) (viaRole[channel] ||= []).push(role);
    return (user.all_channels || []).map(channel => {
      const from = [];
      if (admin.has(channel)) from.push("admin");
      if (viaRole[channel]) from.push(...viaRole[channel].map(role => `role ${role}`));
      if (!from.length) from.push("document grant");
      return h("span", { class: "badge", title: from.join(", ") }, `${channel} ← ${from.join(", ")}`);
    });
  };

  mount(main,
    h("h2", {}, `Users and roles of ${db}`),
    h("div", { class: "row" },
      h("section", { class: "card grow" }, h("h3", {}, `Users (${users.length})`),
        h("table", { id: "user-list" },
          h("tr", {}, h("th", {}, "Name"), h("th", {}, "Effective channels (and where each comes from)"), h("th", {}, "Roles"), h("th", {}, "")),
          users.filter(Boolean).map(user => h("tr", { class: editing && editing.name === user.name ? "selected" : null, "data-user": user.name },
            h("td", {}, h("a", { href: href("users", db, user.name), "data-link": true }, user.name)),
            h("td", {}, origins(user)),
            h("td", {}, (user.roles || []).join(", ")),
            h("td", {}, user.disabled ? h("span", { class: "state stopped" }, "disabled") : "")))),
        h("h3", { style: "margin-top:16px" }, `Roles (${roles.length})`),
        h("table", {}, h("tr", {}, h("th", {}, "Role"), h("th", {}, "Channels")),
          roles.filter(Boolean).map(role => h("tr", { "data-role": role.name }, h("td", {}, role.name), h("td", {}, (role.all_channels || role.admin_channels || []).join(", "))))),
        h("div", { class: "toolbar", style: "margin-top:8px" }, roleName, roleChannelsInput, h("button", { onclick: saveRole }, "Create or update role")),
        roleMessage),
      h("section", { class: "card", style: "width:380px" },
        h("h3", {}, editing ? `Edit ${editing.name}` : "Create a user"),
        field("Name", name), field("Password", password), field("Admin channels (comma-separated)", channels),
        field("Admin roles (comma-separated)", userRoles),
        h("label", { class: "check" }, disabled, "Disabled"),
        h("div", { class: "toolbar" },
          h("button", { class: "primary", id: "user-save", onclick: save }, editing ? "Save" : "Create"),
          editing ? h("button", { class: "danger", onclick: remove }, "Delete") : "",
          editing ? h("a", { href: href("users", db), "data-link": true }, "New user") : ""),
        message)));
}
