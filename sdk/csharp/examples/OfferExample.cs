// A game client in C# on the offer SDK's binding (sdk/csharp/OfferSdk.cs): the same game as
// examples/c and examples/cpp. It registers the seven callbacks as event handlers, starts the
// SDK, asks for an offer at the player's first loss, buys it (a purchase, plus a
// currency_earned with source "purchase" for each currency pack), waits for the inventory and
// balance updates it brings, and hides its store when the kill switch turns offers off. The
// events are raised inside OfferSdk.Poll(), called once a frame from the main loop.
//
// A game whose studio signs its players' tokens (player identity "required") gives the SDK the
// player's token at init and a new one whenever the SDK asks (OnPlayerTokenNeeded, before the
// token expires or when the engine refused it). Here the studio's backend is a file: set
// OFFER_PLAYER_TOKEN_FILE to it, and the game reads the token there (its sub is the player id:
// player_id_source "jwt").
//
// Usage: mono offer_example.exe BASE_URL GAME_ID SDK_KEY DATA_DIR PLAYER_ID
// Exits 0 once the kill switch has turned offers off, 1 when init fails, 2 when nothing
// happens for two minutes, 3 when no offer comes.

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Text;
using System.Text.RegularExpressions;
using System.Threading;
using Offer;

static class OfferExample
{
    // This game's currency packs: item id to (currency, amount). A game knows its own store.
    static readonly Dictionary<string, KeyValuePair<string, long>> Packs =
        new Dictionary<string, KeyValuePair<string, long>>
        {
            { "gems_500", new KeyValuePair<string, long>("gems", 500) },
        };

    static bool bought, waitingInventory, waitingBalance, settled, done;
    static int exitCode = 2;

    // The string value of "key":"..." in the SDK's compact JSON, or "" (a real game uses the
    // JSON library it already has).
    static string JsonString(string json, string key)
    {
        Match m = Regex.Match(json, "\"" + key + "\":\"([^\"]*)\"");
        return m.Success ? m.Groups[1].Value : "";
    }

    // The integer value of "key":N, or fallback.
    static long JsonInt(string json, string key, long fallback)
    {
        Match m = Regex.Match(json, "\"" + key + "\":(-?[0-9]+)");
        return m.Success ? long.Parse(m.Groups[1].Value) : fallback;
    }

    static void Say(string line)
    {
        Console.WriteLine(line);
    }

    static void CheckSettled()
    {
        if (bought && !settled && !waitingInventory && !waitingBalance)
        {
            settled = true;
            Say("purchase settled");
        }
    }

    static void OnReady(string json)
    {
        Say("ready " + json);
        OfferSdk.RequestOffer("first_loss"); // the player just lost for the first time
    }

    static void OnOffer(string json)
    {
        Say("offer " + json);
        if (bought)
        {
            return;
        }
        string offerId = JsonString(json, "offer_id");
        int itemsAt = json.IndexOf("\"items\":", StringComparison.Ordinal);
        string items = itemsAt < 0 ? "" : json.Substring(itemsAt);
        var itemIds = new StringBuilder();
        foreach (Match m in Regex.Matches(items, "\"item_id\":\"([^\"]*)\""))
        {
            string itemId = m.Groups[1].Value;
            itemIds.Append(itemIds.Length == 0 ? "\"" : ",\"").Append(itemId).Append('"');
            KeyValuePair<string, long> pack;
            if (Packs.TryGetValue(itemId, out pack))
            {
                string earned = "{\"type\":\"currency_earned\",\"currency_id\":\"" + pack.Key +
                    "\",\"amount\":" + pack.Value + ",\"source\":\"purchase\",\"tx_id\":\"pack-" +
                    itemId + "-" + offerId + "\"}";
                // The engine pushes the new balance to the player's sockets: OnBalanceUpdate.
                Say("track currency_earned " + (int)OfferSdk.Track(earned));
                waitingBalance = true;
            }
            else
            {
                waitingInventory = true;
            }
        }
        // A shipped game adds the store's receipt, untouched, before the closing brace: with
        // Unity IAP, ,"receipt":{"store":"unity","receipt":"<product.receipt, JSON-escaped>"}.
        // This example's game does not check receipts (its verification is off).
        string purchase = "{\"type\":\"purchase\",\"offer_id\":\"" + offerId + "\",\"item_ids\":[" +
            itemIds + "],\"price_cents\":" + JsonInt(json, "price_cents", 0) +
            ",\"tx_id\":\"buy-" + offerId + "\"}";
        Say("track purchase " + (int)OfferSdk.Track(purchase));
        bought = true;
        Say("bought " + offerId);
        CheckSettled();
    }

    static void OnNoOffer(string json)
    {
        Say("no offer " + json);
        if (!bought)
        {
            done = true;
            exitCode = 3;
        }
    }

    static void OnBalance(string json)
    {
        Say("balance " + json);
        if (bought)
        {
            waitingBalance = false;
            CheckSettled();
        }
    }

    static void OnInventory(string json)
    {
        Say("inventory " + json);
        if (bought)
        {
            waitingInventory = false;
            CheckSettled();
        }
    }

    static void OnKillSwitch(string json)
    {
        Say("kill switch " + json);
        if (JsonInt(json, "level", 0) >= 2)
        {
            Say("offers are off: store hidden");
            done = true;
            exitCode = 0;
        }
    }

    /// <summary>Asks the studio's backend for the player's token: this example's backend is
    /// the file OFFER_PLAYER_TOKEN_FILE names. Null for a game without signed player
    /// identity.</summary>
    static string BackendToken()
    {
        string path = Environment.GetEnvironmentVariable("OFFER_PLAYER_TOKEN_FILE");
        return path == null ? null : File.ReadAllText(path).Trim();
    }

    static void OnPlayerTokenNeeded(string json)
    {
        Say("player token needed " + json);
        string token = BackendToken();
        if (token != null)
        {
            Say("set player token " + (int)OfferSdk.SetPlayerToken(token));
        }
    }

    static int Main(string[] args)
    {
        if (args.Length != 5)
        {
            Console.Error.WriteLine("usage: offer_example.exe BASE_URL GAME_ID SDK_KEY DATA_DIR PLAYER_ID");
            return 1;
        }
        OfferSdk.OnSDKReady += OnReady;
        OfferSdk.OnOfferReceived += OnOffer;
        OfferSdk.OnBalanceUpdate += OnBalance;
        OfferSdk.OnInventoryUpdate += OnInventory;
        OfferSdk.OnNoOffer += OnNoOffer;
        OfferSdk.OnKillSwitchChanged += OnKillSwitch;
        OfferSdk.OnConfigUpdated += json => Say("config " + json);
        OfferSdk.OnPlayerTokenNeeded += OnPlayerTokenNeeded;
        Say("registered " + (int)OfferSdk.RegisterCallbacks());

        // The game's svc_config.json, shipped with the build; written here so the example runs
        // from any folder.
        string token = BackendToken();
        File.WriteAllText(Path.Combine(args[3], "svc_config.json"),
            "{\"auto_login\": true, \"player_id_source\": \"" + (token == null ? "custom" : "jwt") +
            "\"}");
        // One JSON object: the SDK configuration, the SDK's folder and the game's player id, or
        // its signed token.
        string player = token == null
            ? "\"player_id\":\"" + args[4] + "\""
            : "\"player_token\":\"" + token + "\"";
        string config = "{\"api_key\":\"" + args[2] + "\",\"game_id\":\"" + args[1] +
            "\",\"environment\":\"production\",\"base_url\":\"" + args[0] +
            "\",\"data_dir\":\"" + args[3] + "\"," + player + "}";
        SvcResult init = OfferSdk.Init(config);
        Say("init " + (int)init);
        if (init != SvcResult.Ok)
        {
            return 1;
        }

        // The frame loop: the events are raised here, on the game's thread.
        Stopwatch clock = Stopwatch.StartNew();
        while (!done && clock.Elapsed < TimeSpan.FromMinutes(2))
        {
            OfferSdk.Poll();
            Thread.Sleep(16);
        }
        Say("shutdown " + (int)OfferSdk.Shutdown());
        return exitCode;
    }
}
